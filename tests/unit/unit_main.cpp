// Catch2 main for the cudashim_unit test executable.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

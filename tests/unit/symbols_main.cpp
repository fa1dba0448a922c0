// Catch2 main for cudashim_unit_symbols.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

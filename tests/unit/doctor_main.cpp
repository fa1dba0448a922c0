// Catch2 main for cudashim_unit_doctor.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

// Include after LibTorch's headers in a test: glog (pulled in by c10) defines CHECK, CHECK_EQ,
// ... as aborting assertions; drop them so that doctest's macros of the same names are used.
#pragma once

#undef CHECK
#undef CHECK_EQ
#undef CHECK_NE
#undef CHECK_LT
#undef CHECK_LE
#undef CHECK_GT
#undef CHECK_GE
#undef CHECK_FALSE

#include <doctest/doctest.h>

/*
 * unittest.h - UNITTEST marks a file-local function that unit tests call:
 * static in release builds, external in the test build (-DUNITTEST).
 */
#ifndef GP_UTIL_UNITTEST_H
#define GP_UTIL_UNITTEST_H

#ifdef UNITTEST
#define UNITTEST_STATIC
#else
#define UNITTEST_STATIC static
#endif

#endif

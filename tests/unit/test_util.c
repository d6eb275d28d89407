/* util.c: the strict integer parsers take the whole string as decimal digits; free_all and
 * strv_free_all free every argument, past NULL ones (no leak under valgrind or asan). */
#include <stdint.h>

#include "tap.h"
#include "util.h"

int main(void)
{
	uint64_t u = 7;
	int64_t i = 7;

	CHECK(parse_u64("18446744073709551615", &u) == 0 && u == UINT64_MAX, "u64: the largest");
	CHECK(parse_u64("18446744073709551616", &u) < 0, "u64: one more is refused");
	CHECK(parse_u64(" -1", &u) < 0 && u == UINT64_MAX,
	      "u64: \" -1\" is refused, not ULLONG_MAX");
	CHECK(parse_u64("-1", &u) < 0 && parse_u64("+1", &u) < 0, "u64: no sign");
	CHECK(parse_u64(" 1", &u) < 0 && parse_u64("1 ", &u) < 0, "u64: no blanks");
	CHECK(parse_u64("", &u) < 0 && parse_u64(NULL, &u) < 0, "u64: empty and NULL refused");
	CHECK(parse_i64("-9223372036854775808", &i) == 0 && i == INT64_MIN, "i64: the smallest");
	CHECK(parse_i64("9223372036854775807", &i) == 0 && i == INT64_MAX, "i64: the largest");
	CHECK(parse_i64("9223372036854775808", &i) < 0 && parse_i64("-9223372036854775809", &i) < 0,
	      "i64: one past either end is refused");
	CHECK(parse_i64("-1", &i) == 0 && i == -1, "i64: -1");
	CHECK(parse_i64("+5", &i) == 0 && i == 5, "i64: +5");
	CHECK(parse_i64("--1", &i) < 0 && parse_i64("-", &i) < 0 && parse_i64(" 1", &i) < 0,
	      "i64: a sign is followed by digits only");
	CHECK(parse_i64("", &i) < 0 && parse_i64(NULL, &i) < 0, "i64: empty and NULL refused");

	char *a = xstrdup("a"), *none = NULL, *c = xstrdup("c");
	char **v = strv_append(NULL, "x"), **no_v = NULL, **w = strv_append(NULL, "y");
	CHECK(ARRAY_SIZE(((void *const[]){a, none, c})) == 3, "free_all: one slot per argument");
	free_all(a, none, c);
	strv_free_all(v, no_v, w);
	CHECK(true, "free_all, strv_free_all: every argument freed, a NULL one skipped");
	TAP_DONE();
}

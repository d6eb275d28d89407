/* util.c: the strict integer parsers take the whole string as decimal digits; free_all and
 * strv_free_all free every argument, past NULL ones (no leak under valgrind or asan);
 * rfc3339_at's UTC date is gmtime_r's. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tap.h"
#include "util.h"

/* rfc3339_at(t) is gmtime_r's date and time of t */
static int same_as_gmtime(int64_t t, long nsec)
{
	struct timespec ts = {.tv_sec = t, .tv_nsec = nsec};
	struct tm tm;
	char want[64], got[64];

	gmtime_r(&ts.tv_sec, &tm);
	snprintf(want, sizeof(want), "%04d-%02d-%02dT%02d:%02d:%02d.%09ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, nsec);
	rfc3339_at(&ts, got, sizeof(got));
	if (!strcmp(want, got))
		return 1;
	fprintf(stderr, "# %lld: %s, gmtime_r %s\n", (long long)t, got, want);
	return 0;
}

/* From before 1970 to past 2100 in steps that walk through the times of day, and the day
 * boundaries of leap (2000), century (2100) and pre-epoch (1900) years. */
static int rfc3339_matches_gmtime(void)
{
	static const int64_t fixed[] = {0,	     -1,	 951782400,  951868799,
					951868800,   4107542400, 4107628799, 4107628800,
					-2203891200, 1798761600};
	for (int64_t t = -2208988800; t < 4133980800; t += 86400 * 7 + 3607)
		if (!same_as_gmtime(t, 120533633))
			return 0;
	for (size_t k = 0; k < sizeof(fixed) / sizeof(fixed[0]); k++)
		if (!same_as_gmtime(fixed[k], 0))
			return 0;
	return 1;
}

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
	CHECK(rfc3339_matches_gmtime(), "rfc3339_at: gmtime_r's UTC date and time, 1900 to 2100");
	TAP_DONE();
}

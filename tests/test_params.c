/* test_params.c - parameter lists and byte sizes. */
#include "test.h"
#include "params.h"
#include "event.h"

TEST(bytes_units) {
  uint64_t v;
  CHECK(parse_bytes("512", 0, &v) == 0); CHECK_EQ(v, 512);
  CHECK(parse_bytes("2K", 0, &v) == 0); CHECK_EQ(v, 2048);   /* K/M/G/T: 1024^n, as PyTorch's users count */
  CHECK(parse_bytes("2KB", 0, &v) == 0); CHECK_EQ(v, 2000);   /* KB/MB/GB/TB: 1000^n */
  CHECK(parse_bytes("2kb", 0, &v) == 0); CHECK_EQ(v, 2000);
  CHECK(parse_bytes("10GB", 0, &v) == 0); CHECK_EQ(v, 10000000000ull);
  CHECK(parse_bytes("10gb", 0, &v) == 0); CHECK_EQ(v, 10000000000ull);
  CHECK(parse_bytes("10g", 0, &v) == 0); CHECK_EQ(v, 10ull << 30);
  CHECK(parse_bytes("10gib", 0, &v) == 0); CHECK_EQ(v, 10ull << 30);
  CHECK(parse_bytes("512B", 0, &v) == 0); CHECK_EQ(v, 512);
  CHECK(parse_bytes("2Ki", 0, &v) == 0); CHECK_EQ(v, 2048);
  CHECK(parse_bytes("1.5GiB", 0, &v) == 0); CHECK_EQ(v, 1610612736ull);
  CHECK(parse_bytes("40G", 0, &v) == 0); CHECK_EQ(v, 40ull << 30);
  CHECK(parse_bytes("3Ti", 0, &v) == 0); CHECK_EQ(v, 3ull << 40);
  CHECK(parse_bytes("85017493504", 0, &v) == 0); CHECK_EQ(v, 85017493504ull);
  CHECK(parse_bytes("50%", 1000, &v) == 0); CHECK_EQ(v, 500);
}

TEST(bytes_malformed_rejected) {
  uint64_t v;
  CHECK(parse_bytes("", 0, &v) < 0);
  CHECK(parse_bytes("12Q", 0, &v) < 0);
  CHECK(parse_bytes("-5", 0, &v) < 0);
  CHECK(parse_bytes("5GiBx", 0, &v) < 0);
  CHECK(parse_bytes("abc", 0, &v) < 0);
  CHECK(parse_bytes("50%", 0, &v) < 0);        /* % only where a fraction makes sense */
  CHECK(parse_bytes("0x10", 0, &v) < 0);       /* hexadecimal is not read */
  CHECK(parse_bytes("0x1p40", 0, &v) < 0);
  CHECK(parse_bytes("inf", 0, &v) < 0);
  CHECK(parse_bytes("10GBi", 0, &v) < 0);
  CHECK(parse_bytes("99999999999999999999999", 0, &v) < 0);
}

static const struct param_spec spec[] = {
  {"layers", P_INT, "8", "layers"},
  {"limit", P_BYTES, "", "a limit"},
  {"rate", P_FLOAT, "0.5", "a rate"},
  {"on", P_BOOL, "0", "a switch"},
  {"divs", P_STR, "", "a list"},
  {NULL, 0, NULL, NULL},
};

TEST(params_parse_and_get) {
  struct params p;
  char name[64], err[FB_ERRLEN];
  CHECK(params_parse_spec("caching:layers=4,limit=2MiB,divs=[256:1,512:2,>:8],on=1", name, sizeof name, &p, err) == 0);
  CHECK_STR(name, "caching");
  CHECK(params_check(&p, spec, "caching", err) == 0);
  CHECK_EQ(param_int(&p, "layers"), 4);
  CHECK_EQ(param_bytes(&p, "limit"), 2 << 20);
  CHECK_STR(param_str(&p, "divs"), "[256:1,512:2,>:8]");
  CHECK(param_bool(&p, "on"));
  CHECK(param_float(&p, "rate") == 0.5);    /* default */
  char out[256];
  params_format(&p, out, sizeof out);
  CHECK_STR(out, "layers=4,limit=2MiB,divs=[256:1,512:2,>:8],on=1");
}

TEST(params_unknown_key_lists_known) {
  struct params p;
  char name[64], err[FB_ERRLEN];
  CHECK(params_parse_spec("w:lyers=4", name, sizeof name, &p, err) == 0);
  CHECK(params_check(&p, spec, "w", err) < 0);
  CHECK_CONTAINS(err, "unknown parameter 'lyers'");
  CHECK_CONTAINS(err, "layers limit rate on divs");
}

TEST(params_bad_values_named) {
  struct params p;
  char name[64], err[FB_ERRLEN];
  CHECK(params_parse_spec("w:limit=12Q", name, sizeof name, &p, err) == 0);
  CHECK(params_check(&p, spec, "w", err) < 0);
  CHECK_CONTAINS(err, "limit=12Q");
  CHECK(params_parse_spec("w:layers=x", name, sizeof name, &p, err) == 0);
  CHECK(params_check(&p, spec, "w", err) < 0);
  CHECK_CONTAINS(err, "layers=x");
  CHECK(params_parse_spec("w:layers", name, sizeof name, &p, err) < 0);
  CHECK(params_parse_spec("w:divs=[1,2", name, sizeof name, &p, err) < 0);
  CHECK_CONTAINS(err, "unbalanced");
  CHECK(params_parse_spec("w:on=1,on=0", name, sizeof name, &p, err) < 0);
  CHECK_CONTAINS(err, "twice");
}

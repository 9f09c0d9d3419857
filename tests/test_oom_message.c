/* test_oom_message.c - the limit read from PyTorch's OOM text: the memory fraction's
 * "allowed" wins over the total capacity, every format PyTorch has printed (2.1+ sentences,
 * the 2.1 "capacty" typo, 1.x parentheses with and without "allowed", pre-1.4 "cached"),
 * the low end of the 2-decimal printing, and text that is no OOM message refused. */
#include <stdlib.h>
#include "test.h"
#include "oom_message.h"

#define GIB (1ull << 30)
#define MIB (1ull << 20)

static const char issue_text[] =
  "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.91 GiB. GPU 0 has a total capacity of 79.18 GiB "
  "of which 62.10 GiB is free. Including non-PyTorch memory, this process has 17.07 GiB memory in use. 19.79 GiB "
  "allowed; Of the allocated memory 12.81 GiB is allocated by PyTorch, and 3.52 GiB is reserved by PyTorch but "
  "unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
  "to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)";

TEST(oom_message_allowed_is_the_limit_at_its_low_end) {
  struct oom_message m;
  char err[FB_ERRLEN];
  CHECK_MSG(!oom_message_parse(issue_text, &m, err), "%s", err);
  CHECK(m.has_allowed);
  /* 19.79 GiB printed: the value is in [19.785, 19.795) GiB; the limit is the low end */
  CHECK(m.limit == m.allowed);
  CHECK(m.limit <= (uint64_t)(19.785 * GIB) + 1 && m.limit >= (uint64_t)(19.785 * GIB));
  CHECK(m.limit_hi > (uint64_t)(19.794 * GIB) && m.limit_hi <= (uint64_t)(19.795 * GIB));
  CHECK(m.total_capacity >= (uint64_t)(79.175 * GIB) && m.total_capacity < (uint64_t)(79.18 * GIB));
  CHECK(m.tried >= (uint64_t)(3.905 * GIB) && m.tried < (uint64_t)(3.91 * GIB));
  CHECK(m.in_use >= (uint64_t)(17.065 * GIB) && m.in_use < (uint64_t)(17.07 * GIB));
  CHECK(m.allocated >= (uint64_t)(12.805 * GIB) && m.allocated < (uint64_t)(12.81 * GIB));
  CHECK(m.reserved_unallocated >= (uint64_t)(3.515 * GIB) && m.reserved_unallocated < (uint64_t)(3.52 * GIB));
  CHECK(m.format == 2);
  CHECK(strstr(m.source, "allowed") != NULL);
}

TEST(oom_message_total_capacity_without_a_fraction_and_the_typo) {
  struct oom_message m;
  char err[FB_ERRLEN];
  const char *t = "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacty of 79.15 GiB of which "
                  "4.62 MiB is free. Process 21 has 4.00 GiB memory in use. Including non-PyTorch memory, this process "
                  "has 75.14 GiB memory in use. Of the allocated memory 74.50 GiB is allocated by PyTorch, and 128.00 MiB "
                  "is reserved by PyTorch but unallocated.";
  CHECK_MSG(!oom_message_parse(t, &m, err), "%s", err);
  CHECK(!m.has_allowed);
  CHECK(m.total_capacity >= (uint64_t)(79.145 * GIB) && m.total_capacity < (uint64_t)(79.15 * GIB));
  /* no fraction: what PyTorch could hold, 74.50 GiB + 128 MiB reserved + 4.62 MiB free, not the
   * 79.15 GiB total (process 21's 4 GiB and this process's context are not PyTorch's to take) */
  CHECK(m.from_free);
  CHECK(m.free_bytes >= (uint64_t)(4.615 * MIB) && m.free_bytes < (uint64_t)(4.62 * MIB));
  uint64_t lo = (uint64_t)(74.495 * GIB) + (uint64_t)(127.995 * MIB) + (uint64_t)(4.615 * MIB);
  CHECK(m.limit >= lo - 2 && m.limit <= lo + (uint64_t)(0.02 * MIB));
  CHECK(m.limit_hi > m.limit && m.limit_hi <= (uint64_t)(74.505 * GIB) + (uint64_t)(128.005 * MIB) + (uint64_t)(4.625 * MIB));
  CHECK(strstr(m.source, "reserved + free") != NULL);
  CHECK(m.tried >= 20 * MIB - MIB / 200 && m.tried < 20 * MIB);
  CHECK(m.in_use >= (uint64_t)(75.135 * GIB) && m.in_use < (uint64_t)(75.14 * GIB));   /* this process's, not process 21's */
}

TEST(oom_message_reads_the_1x_formats) {
  struct oom_message m;
  char err[FB_ERRLEN];
  const char *t = "RuntimeError: CUDA out of memory. Tried to allocate 36.00 MiB (GPU 0; 7.93 GiB total capacity; 130.35 MiB "
                  "already allocated; 47.06 MiB free; 188.00 MiB reserved in total by PyTorch) If reserved memory is >> "
                  "allocated memory try setting max_split_size_mb to avoid fragmentation.";
  CHECK_MSG(!oom_message_parse(t, &m, err), "%s", err);
  CHECK(!m.has_allowed && m.format == 1);
  CHECK(m.total_capacity >= (uint64_t)(7.925 * GIB) && m.total_capacity < (uint64_t)(7.93 * GIB));
  /* 188 MiB reserved in total + 47.06 MiB free: all PyTorch could have had of the 7.93 GiB */
  CHECK(m.from_free && m.limit >= (uint64_t)(235.05 * MIB) - 2 && m.limit < (uint64_t)(235.07 * MIB));
  CHECK(m.allocated >= (uint64_t)(130.345 * MIB) && m.allocated < (uint64_t)(130.35 * MIB));
  /* reserved in total 188 MiB, of which 130.35 allocated */
  CHECK(m.reserved_unallocated > 57 * MIB && m.reserved_unallocated < 58 * MIB);
  const char *f = "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 79.15 GiB total capacity; 15.00 GiB already "
                  "allocated; 60.30 GiB free; 19.79 GiB allowed; 16.00 GiB reserved in total by PyTorch)";
  CHECK_MSG(!oom_message_parse(f, &m, err), "%s", err);
  CHECK(m.has_allowed && m.limit == m.allowed);
  CHECK(m.limit >= (uint64_t)(19.785 * GIB) && m.limit < (uint64_t)(19.79 * GIB));
  const char *c = "RuntimeError: CUDA out of memory. Tried to allocate 512 bytes (GPU 0; 11.17 GiB total capacity;\n"
                  "10.50 GiB already allocated; 3.81 MiB free; 10.71 GiB cached)";
  CHECK_MSG(!oom_message_parse(c, &m, err), "%s", err);
  CHECK(m.tried == 512 && m.format == 0);
  CHECK(m.from_free && m.limit >= (uint64_t)(10.705 * GIB) && m.limit < (uint64_t)(10.72 * GIB));   /* 10.71 GiB cached + 3.81 MiB */
  /* a device nearly all PyTorch's: reserved + free reaches the total, which stays the limit */
  const char *whole = "CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 10.00 GiB of which "
                      "0.50 GiB is free. Including non-PyTorch memory, this process has 9.50 GiB memory in use. Of the "
                      "allocated memory 9.00 GiB is allocated by PyTorch, and 0.50 GiB is reserved by PyTorch but unallocated.";
  CHECK_MSG(!oom_message_parse(whole, &m, err), "%s", err);
  CHECK(!m.from_free && m.limit == m.total_capacity);
}

TEST(oom_message_refuses_text_that_is_no_oom_message) {
  struct oom_message m;
  char err[FB_ERRLEN];
  CHECK(oom_message_parse("RuntimeError: expected scalar type Float but found Half", &m, err) == -1);
  CHECK(strstr(err, "out of memory") != NULL);
  CHECK(oom_message_parse("CUDA out of memory. Tried to allocate 2.00 GiB", &m, err) == -1);
  CHECK(strstr(err, "total capacity") != NULL);
  char path[512];
  snprintf(path, sizeof path, "%s/missing_oom.txt", test_tmpdir());
  CHECK(oom_message_read(path, &m, err) == -1);
  CHECK(strstr(err, "missing_oom.txt") != NULL);
  snprintf(path, sizeof path, "%s/oom.txt", test_tmpdir());
  FILE *fp = fopen(path, "w");
  CHECK(fp);
  fputs(issue_text, fp);
  fclose(fp);
  CHECK_MSG(!oom_message_read(path, &m, err), "%s", err);
  CHECK(m.has_allowed);
}

/* the text cut into lines of `width` characters: hard (a break anywhere, as a terminal
 * wraps), or at spaces (the space becomes the break, as a log wraps), indented or not */
static char *folded(const char *t, int width, int at_spaces, const char *indent) {
  size_t n = strlen(t), cap = n * (2 + strlen(indent)) + 16, k = 0, col = 0;
  char *o = malloc(cap);
  for (size_t i = 0; i < n; i++) {
    if (at_spaces && t[i] == ' ') {   /* break here when the next word would pass the width */
      size_t w = 1;
      while (i + w < n && t[i + w] != ' ') w++;
      if (col + w > (size_t)width) { k += (size_t)sprintf(o + k, "\n%s", indent); col = 0; continue; }
    }
    if (!at_spaces && col == (size_t)width) { k += (size_t)sprintf(o + k, "\n%s", indent); col = 0; }
    o[k++] = t[i];
    col++;
  }
  o[k] = 0;
  return o;
}

TEST(oom_message_folded_at_any_column_reads_the_same) {
  struct oom_message ref, m;
  char err[FB_ERRLEN];
  CHECK_MSG(!oom_message_parse(issue_text, &ref, err), "%s", err);
  const char *indents[] = {"", "    ", "\t"};
  for (int width = 8; width <= 130; width++)
    for (int mode = 0; mode < 2; mode++)
      for (int ind = 0; ind < 3; ind++) {
        char *f = folded(issue_text, width, mode, indents[ind]);
        int rc = oom_message_parse(f, &m, err);
        CHECK_MSG(!rc, "width %d mode %d indent %d: %s", width, mode, ind, err);
        CHECK_MSG(m.limit == ref.limit && m.limit_hi == ref.limit_hi && m.has_allowed, "width %d mode %d: limit %llu", width,
                  mode, (unsigned long long)m.limit);
        CHECK(m.total_capacity == ref.total_capacity && m.request_bytes == ref.request_bytes);
        free(f);
      }
  /* the issue's reproducer: folded at 46 columns read 65.61 GiB instead of 19.79 GiB */
  char *f = folded(issue_text, 46, 0, "");
  CHECK_MSG(!oom_message_parse(f, &m, err), "%s", err);
  CHECK(m.limit >= (uint64_t)(19.785 * GIB) && m.limit < (uint64_t)(19.79 * GIB));
  free(f);
  /* CRLF line ends too */
  CHECK_MSG(!oom_message_parse("CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 79.15\r\nGiB total capacity; 15.00 GiB "
                               "already allocated; 60.30 GiB free; 19.\r\n79 GiB allowed; 16.00 GiB reserved in total by PyTorch)",
                               &m, err), "%s", err);
  CHECK(m.has_allowed && m.limit >= (uint64_t)(19.785 * GIB) && m.limit < (uint64_t)(19.79 * GIB));
}

TEST(oom_message_request_bytes_is_the_failed_request) {
  struct oom_message m;
  char err[FB_ERRLEN];
  const char *t = "CUDA out of memory. Tried to allocate 5.68 GiB. GPU 0 has a total capacity of 79.18 GiB of which 1.00 GiB is free.";
  CHECK_MSG(!oom_message_parse(t, &m, err), "%s", err);
  /* 5.68 GiB printed: [5.675, 5.685) GiB */
  CHECK(m.request_bytes >= (uint64_t)(5.675 * GIB) && m.request_bytes <= (uint64_t)(5.675 * GIB) + 1);
  CHECK(m.request_hi > (uint64_t)(5.684 * GIB) && m.request_hi <= (uint64_t)(5.685 * GIB));
  uint64_t want = m.request_bytes;
  char *f = folded(t, 40, 0, "");   /* "Tried to allocate 5.|68 GiB" */
  CHECK(strstr(f, "5.\n68") != NULL);
  CHECK_MSG(!oom_message_parse(f, &m, err), "%s", err);
  CHECK(m.request_bytes == want);
  free(f);
  CHECK_MSG(!oom_message_parse("CUDA out of memory. Tried to\nallocate 512\nbytes (GPU 0; 11.17 GiB total capacity; 10.71 GiB cached)",
                               &m, err), "%s", err);
  CHECK(m.request_bytes == 512 && m.request_hi == 513);
  struct oom_message z;
  memset(&z, 0, sizeof z);
  CHECK(z.request_bytes == 0);   /* absent: 0 (a failed parse clears the struct) */
  CHECK(oom_message_parse("CUDA out of memory. GPU 0 has a total capacity of 79.18 GiB", &m, err) == -1);
  CHECK(m.request_bytes == 0);
}

TEST(oom_message_several_messages_agree_or_are_refused) {
  struct oom_message m;
  char err[FB_ERRLEN];
  const char *a = "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
                  "79.18 GiB of which 60.00 GiB is free. 19.79 GiB allowed; Of the allocated memory 12.00 GiB is allocated by "
                  "PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated.\n";
  const char *b = "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 1 has a total capacity of "
                  "79.18 GiB of which 61.00 GiB is free. 19.79 GiB allowed; Of the allocated memory 11.00 GiB is allocated by "
                  "PyTorch, and 2.00 GiB is reserved by PyTorch but unallocated.\n";
  const char *c = "[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 2 has a total capacity of "
                  "79.18 GiB of which 61.00 GiB is free. 5.00 GiB allowed; Of the allocated memory 4.00 GiB is allocated by "
                  "PyTorch, and 0.50 GiB is reserved by PyTorch but unallocated.\n";
  char buf[4096];
  snprintf(buf, sizeof buf, "%s%s", a, b);   /* same limit: one limit */
  CHECK_MSG(!oom_message_parse(buf, &m, err), "%s", err);
  CHECK(m.nmessages == 2 && m.has_allowed && m.limit >= (uint64_t)(19.785 * GIB) && m.limit < (uint64_t)(19.79 * GIB));
  CHECK(m.request_bytes >= (uint64_t)(1.995 * GIB) && m.request_bytes < 2 * GIB);   /* the first message's */
  snprintf(buf, sizeof buf, "%s%s%s", a, b, c);   /* the third disagrees: refused, naming both */
  CHECK(oom_message_parse(buf, &m, err) == -1);
  CHECK_CONTAINS(err, "disagree");
  CHECK_CONTAINS(err, "message 1 (byte 38, line 1)");
  CHECK_CONTAINS(err, "message 3 (byte ");
  CHECK_CONTAINS(err, "line 3)");
  CHECK_CONTAINS(err, "19.7850 GiB");
  CHECK_CONTAINS(err, "4.9950 GiB");
  CHECK(m.limit == 0);
  /* the issue's case: 19.79 then 5.00 allowed must not read as 5.00 GiB */
  snprintf(buf, sizeof buf, "%s%s", a, c);
  CHECK(oom_message_parse(buf, &m, err) == -1);
  /* a line that only names the error, with no size, is no second message */
  snprintf(buf, sizeof buf, "RuntimeError: CUDA error: out of memory\n%s", a);
  CHECK_MSG(!oom_message_parse(buf, &m, err), "%s", err);
  CHECK(m.nmessages == 1);
}

TEST(oom_message_sizes_pytorch_does_not_print_are_refused) {
  struct oom_message m;
  char err[FB_ERRLEN];
  const char *head = "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.18 GiB of which 60.00 GiB is free. ";
  const char *bad[] = {"19.79 GB allowed;", "-5.00 GiB allowed;", "1e400 GiB allowed;", "1E4 GiB allowed;", "+5.00 GiB allowed;",
                       "99999999999999999 GiB allowed;", "9999999 TiB allowed;", "80.00 GiB allowed;", "19.79 allowed;",
                       "inf GiB allowed;", "0x10 GiB allowed;", "19,79 GiB allowed;"};
  const char *why[] = {"not a unit PyTorch prints", "a signed size", "an exponent", "an exponent", "a signed size",
                       "more digits", "more bytes than any device", "above the device's total capacity", "without a unit",
                       "\"allowed\" without a size", "a number inside a word", "a number with a comma"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s%s Of the allocated memory 12.00 GiB is allocated by PyTorch, and 1.00 GiB is reserved by "
             "PyTorch but unallocated.", head, bad[i]);
    CHECK_MSG(oom_message_parse(buf, &m, err) == -1, "%s was read: limit %llu", bad[i], (unsigned long long)m.limit);
    CHECK_MSG(strstr(err, why[i]) != NULL, "%s: %s", bad[i], err);
  }
  CHECK(oom_message_parse("CUDA out of memory. Tried to allocate 2.00 GB. GPU 0 has a total capacity of 79.18 GiB", &m, err) == -1);
  CHECK_CONTAINS(err, "\"Tried to allocate\"");
}

TEST(oom_message_a_file_over_1_MiB_is_refused_saying_so) {
  struct oom_message m;
  char err[FB_ERRLEN], path[512];
  snprintf(path, sizeof path, "%s/big_oom.txt", test_tmpdir());
  FILE *f = fopen(path, "w");
  CHECK(f);
  fputs(issue_text, f);
  for (int i = 0; i < (1 << 20) / 60; i++) fputs("log line log line log line log line log line log line log line\n", f);
  fclose(f);
  CHECK(oom_message_read(path, &m, err) == -1);
  CHECK_CONTAINS(err, "more than 1 MiB");
  /* exactly 1 MiB is read */
  f = fopen(path, "w");
  fputs(issue_text, f);
  long n = (long)strlen(issue_text);
  for (; n < (1 << 20); n++) fputc('\n', f);
  fclose(f);
  CHECK_MSG(!oom_message_read(path, &m, err), "%s", err);
}

/* line breaks at random places (1 to 8 of them, each with or without indentation after
 * it, \n or \r\n): every message reads as unfolded */
TEST(oom_message_breaks_anywhere_read_the_same) {
  const char *texts[] = {
    issue_text,
    "RuntimeError: CUDA out of memory. Tried to allocate 36.00 MiB (GPU 0; 7.93 GiB total capacity; 130.35 MiB "
    "already allocated; 47.06 MiB free; 188.00 MiB reserved in total by PyTorch)",
    "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacty of 79.15 GiB of which "
    "4.62 MiB is free. Process 21 has 4.00 GiB memory in use. Including non-PyTorch memory, this process "
    "has 75.14 GiB memory in use. Of the allocated memory 74.50 GiB is allocated by PyTorch, and 128.00 MiB "
    "is reserved by PyTorch but unallocated.",
    "RuntimeError: CUDA out of memory. Tried to allocate 512 bytes (GPU 0; 11.17 GiB total capacity; "
    "10.50 GiB already allocated; 3.81 MiB free; 10.71 GiB cached)"};
  uint64_t seed = 12345;
  for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
    struct oom_message ref, m;
    char err[FB_ERRLEN];
    CHECK_MSG(!oom_message_parse(texts[k], &ref, err), "%s", err);
    size_t n = strlen(texts[k]);
    char *buf = malloc(n * 4 + 64);
    for (int trial = 0; trial < 3000; trial++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      int nbreaks = 1 + (int)((seed >> 33) % 8);
      size_t at[8];
      for (int b = 0; b < nbreaks; b++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        at[b] = 1 + (size_t)((seed >> 33) % (n - 1));
      }
      size_t o = 0;
      for (size_t i = 0; i < n; i++) {
        for (int b = 0; b < nbreaks; b++)
          if (at[b] == i) {
            int style = (int)((seed >> (3 * b)) & 3);
            o += (size_t)sprintf(buf + o, "%s%s", style & 1 ? "\r\n" : "\n", style & 2 ? "   " : "");
          }
        buf[o++] = texts[k][i];
      }
      buf[o] = 0;
      CHECK_MSG(!oom_message_parse(buf, &m, err), "text %zu trial %d: %s\n%s", k, trial, err, buf);
      CHECK_MSG(m.limit == ref.limit && m.limit_hi == ref.limit_hi && m.request_bytes == ref.request_bytes &&
                m.total_capacity == ref.total_capacity && m.format == ref.format,
                "text %zu trial %d: limit %llu, expected %llu\n%s", k, trial, (unsigned long long)m.limit,
                (unsigned long long)ref.limit, buf);
    }
    free(buf);
  }
}

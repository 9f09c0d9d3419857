/* oom_message.h - the memory limit, exactly, from the text PyTorch printed when the job ran
 * out of memory (`--oom-message FILE|-`). Formats understood (c10/cuda/CUDACachingAllocator.cpp):
 *   2.1 and later: "CUDA out of memory. Tried to allocate 3.91 GiB. GPU 0 has a total
 *     capacity of 79.18 GiB of which 62.10 GiB is free. [Process N has X memory in use.]
 *     Including non-PyTorch memory, this process has 17.07 GiB memory in use. [19.79 GiB
 *     allowed; ]Of the allocated memory 12.81 GiB is allocated by PyTorch, and 3.52 GiB is
 *     reserved by PyTorch but unallocated. ..." ("capacty", the 2.1 typo, too)
 *   1.x - 2.0: "CUDA out of memory. Tried to allocate 36.00 MiB (GPU 0; 7.93 GiB total
 *     capacity; 130.35 MiB already allocated; 47.06 MiB free; [19.79 GiB allowed; ]188.00 MiB
 *     reserved in total by PyTorch)"; before 1.4 "... 188.00 MiB cached)".
 * Any prefix ("torch.OutOfMemoryError: ", "HIP out of memory") is fine, and so is the text
 * folded by a terminal or a log at any column: a line break (and the indentation after it)
 * may fall anywhere, between a number and its unit, inside a number, a unit or a word, or
 * stand for the space between two words.
 *
 * Several messages in one text (a multi-rank log): each "out of memory" starts one; those
 * that give the same limit are that limit, those that disagree are refused, naming them. A
 * size PyTorch does not print where a field is ("19.79 GB", "-5.00 GiB", "1e400 GiB"), an
 * "allowed" above the total capacity, and a file over 1 MiB are refused, not read around.
 *
 * The limit is the "N allowed" of a memory fraction (set_per_process_memory_fraction);
 * else what PyTorch could hold at the OOM, its reserved memory plus what was free on the
 * device, when that is below the total capacity (the rest was this process's CUDA context
 * and other processes', which a rerun meets again); else the total capacity. PyTorch prints sizes with 2 decimals (format_size: bytes, KiB,
 * MiB, GiB), so a printed "19.79 GiB" is any value in [19.785, 19.795) GiB: every field here
 * is the LOW end of its printed interval (for the limit: plan for the least it can be),
 * and limit_hi the high end. A size printed in bytes is exact. */
#ifndef FB_OOM_MESSAGE_H
#define FB_OOM_MESSAGE_H
#include <stddef.h>
#include <stdint.h>
#include "event.h"

struct oom_message {
  uint64_t limit;                  /* allowed if has_allowed, else reserved + free or total_capacity (low end) */
  uint64_t total_capacity, allowed, tried, in_use, allocated, reserved_unallocated, free_bytes;
  int has_allowed;                 /* a memory fraction was set: "N allowed" */
  int from_free;                   /* no fraction: the limit is PyTorch's reserved + free, below the total */
  char source[160];                /* the sentence for stderr: where the limit came from */
  /* beyond the API the CLI uses: */
  uint64_t limit_hi;               /* the limit is in [limit, limit_hi) (printed precision) */
  int format;                      /* 2 = 2.1+ sentences, 1 = 1.x parenthesis, 0 = pre-1.4 "cached" */
  /* the request that failed, "Tried to allocate 5.68 GiB": [request_bytes, request_hi) as
   * printed (low end; a size in bytes is exact); 0 when absent (a parse requires it, so only
   * a zero-size request leaves it 0 after success). With several agreeing messages: the first's. */
  uint64_t request_bytes, request_hi;
  int nmessages;                   /* how many agreeing messages the text held (1 = one) */
};

/* 0, or -1 with err: what was expected and where (byte offset) in the text. */
int oom_message_parse(const char *text, struct oom_message *m, char *err /* FB_ERRLEN */);
/* the most a message file may hold (1 MiB): a larger one is refused, saying so */
#define OOM_MESSAGE_MAX (1u << 20)
/* Reads the file ("-": stdin) whole, then parses it; err names the file. 0, or -1. */
int oom_message_read(const char *path_or_dash, struct oom_message *m, char *err);

#endif

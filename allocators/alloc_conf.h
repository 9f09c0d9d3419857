/* alloc_conf.h - speaking PyTorch: its PYTORCH_CUDA_ALLOC_CONF string
 * ("expandable_segments:True,max_split_size_mb:128", as c10/cuda/CUDAAllocatorConfig.cpp
 * parses it) turned into one of our strategy specs ("expandable:max_split_size_mb=128"),
 * and back: the string that switches a strategy with given settings on in PyTorch. */
#ifndef FB_ALLOC_CONF_H
#define FB_ALLOC_CONF_H
#include <stddef.h>
#include <stdint.h>
#include "params.h"

/* conf -> "caching[:k=v,...]", "expandable[:k=v,...]" or "async". Keys that change no
 * memory figure (release_lock_on_cudamalloc, pinned_*) are accepted and named in
 * `ignored` (may be NULL); caching knobs given with backend:cudaMallocAsync are named
 * there too (PyTorch ignores them). 0, or -1 with err saying what was expected. */
int alloc_conf_to_spec(const char *conf, char *spec, size_t n, char *ignored, size_t ignored_n, char *err);

/* The PYTORCH_CUDA_ALLOC_CONF value that runs strategy `name` with effective params p
 * in PyTorch (the caching default is written "expandable_segments:False"). 0, or -1
 * with out = "" where PyTorch has no such setting (a strategy PyTorch does not have). */
int alloc_conf_format(const char *name, const struct params *p, char *out, size_t n);

/* PyTorch's shortest list form of 16 per-interval divisions ("4" when uniform,
 * "[256:1,>:8]"), which its parser reads back into the same 16 values. */
void alloc_conf_roundup(const uint64_t div[16], char *out, size_t n);

/* How a stock PyTorch user switches strategy `name` on, in a few words. */
const char *alloc_conf_how(const char *name);

#endif

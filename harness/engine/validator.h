/* validator.h - --validate: what every online strategy must satisfy. No two live blocks
 * overlap; every block lies inside memory the device holds for the strategy; alignment
 * holds; a block is at least as large as asked; the strategy's own count of what it
 * holds agrees with the device layer's; its internal check passes; after destroy() the
 * device holds nothing. */
#ifndef FB_VALIDATOR_H
#define FB_VALIDATOR_H
#include "allocator.h"
#include "ordset.h"

struct validator {
  struct ordset live;           /* live blocks by address */
  const struct allocator_ops *ops;
  void *a;
  struct device *d;
  uint64_t ops_since_check;
};

void validator_init(struct validator *v, const struct allocator_ops *ops, void *a, struct device *d);
int validator_alloc(struct validator *v, const struct block *b, uint64_t requested, char *err);
int validator_free(struct validator *v, const struct block *b, char *err);
/* counts agree and the strategy's check() passes (called periodically and at the end) */
int validator_counts(struct validator *v, char *err);
/* after destroy(): nothing held */
int validator_final(struct validator *v, char *err);
void validator_release(struct validator *v);

#endif

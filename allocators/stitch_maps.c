/* stitch_maps.c - where the `stitch` strategy's memory is created and mapped, in as few
 * driver calls as the driver allows. A driver call costs about the same whatever its
 * size, and a physical handle maps only whole (tests/probes/vmm_cost.cu), so:
 *   - a primitive range grows by one physical handle per growth (of at most handle_max
 *     bytes when that is set), its pages side by side; each page knows its index in its
 *     handle (hoff) and the handle's length (hlen); a handle is given back whole, once
 *     every page of it is free;
 *   - a stitched range is made of whole handles (stitch_ranges.c gathers only those, and a
 *     head page only from a handle of one page) and maps each with one call; it records
 *     each mapping's length at its first slot (plen) and is unmapped as it was mapped.
 * See stitch.h. */
#include <stdio.h>
#include <stdlib.h>
#include "stitch.h"

/* ---- primitive ranges ---- */

int stitch_maps_prim_map_new(struct stitch *st, struct srange *r, uint64_t first, uint64_t k) {
  uint64_t done = 0;
  int rc = 0;
  while (done < k) {
    uint64_t n = k - done, handle;
    if (st->handle_pages && n > st->handle_pages) n = st->handle_pages;
    if ((rc = dev_phys_create(st->dev, n * ST_PAGE, &handle))) break;
    if ((rc = dev_map(st->dev, r->va + (first + done) * ST_PAGE, n * ST_PAGE, handle))) {
      dev_phys_release(st->dev, handle);
      break;
    }
    for (uint64_t i = 0; i < n; i++) {
      r->handle[first + done + i] = handle;
      r->hoff[first + done + i] = (uint32_t)i;
      r->hlen[first + done + i] = (uint32_t)n;
      r->mapped[first + done + i] = 1;
    }
    r->nmapped += n;
    st->held += n * ST_PAGE;
    done += n;
  }
  if (rc) stitch_maps_prim_unmap_release(st, r, first, first + done);   /* all or nothing */
  return rc;
}

void stitch_maps_prim_unmap_release(struct stitch *st, struct srange *r, uint64_t ha, uint64_t hb) {
  for (uint64_t i = ha; i < hb;) {
    uint64_t n = r->hlen[i];
    dev_unmap(st->dev, r->va + i * ST_PAGE, n * ST_PAGE);
    dev_phys_release(st->dev, r->handle[i]);
    for (uint64_t j = i; j < i + n; j++) {
      r->mapped[j] = 0;
      r->handle[j] = 0;
      r->hoff[j] = r->hlen[j] = 0;
    }
    r->nmapped -= n;
    st->held -= n * ST_PAGE;
    i += n;
  }
}

/* ---- stitched ranges ---- */

/* the home page of slot q of stitched range s: *home, and its index there; runs walked
 * from run *j at slot *at (a cursor the caller keeps, for slots in increasing order) */
static uint64_t slot_page(const struct srange *s, uint64_t q, uint32_t *j, uint64_t *at, const struct srange **home) {
  while (q >= *at + s->runs[*j].npages) *at += s->runs[(*j)++].npages;
  const struct srun *u = &s->runs[*j];
  *home = u->home;
  return (u->addr - u->home->va) / ST_PAGE + (q - *at);
}

int stitch_maps_view_map_span(struct stitch *st, struct srange *s, uint64_t from, uint64_t to) {
  uint32_t j = 0;
  uint64_t at = 0;
  int rc = 0;
  for (uint64_t q = from; q < to && !rc;) {
    const struct srange *h, *h2;
    uint64_t i = slot_page(s, q, &j, &at, &h), n = h->hlen[i];
    int whole = h->hoff[i] == 0 && q + n <= to;
    uint32_t j2 = j;
    for (uint64_t k = 1, at2 = at; whole && k < n; k++)   /* the handle's pages, in order, in the next slots */
      whole = slot_page(s, q + k, &j2, &at2, &h2) == i + k && h2 == h;
    if (!whole) {
      snprintf(st->dev->err, FB_ERRLEN, "stitch: slot %llu of a stitched range holds part of a handle", (unsigned long long)q);
      rc = -1;
      break;
    }
    if ((rc = dev_map(st->dev, s->vbase + q * ST_PAGE, n * ST_PAGE, h->handle[i]))) break;
    s->plen[q] = (uint32_t)n;
    q += n;
  }
  if (rc) stitch_maps_view_unmap_span(st, s, from, to);
  return rc;
}

void stitch_maps_view_unmap_span(struct stitch *st, struct srange *s, uint64_t from, uint64_t to) {
  for (uint64_t q = from; q < to; q++)
    if (s->plen[q]) {
      uint64_t n = s->plen[q];
      dev_unmap(st->dev, s->vbase + q * ST_PAGE, n * ST_PAGE);
      s->plen[q] = 0;
      q += n - 1;
    }
}

void stitch_maps_view_unmap_pieces_of(struct stitch *st, struct srange *s, uint8_t *fresh) {
  for (uint64_t q = 0; q < s->npages;) {
    uint64_t n = s->plen[q] ? s->plen[q] : 1, any = 0;
    for (uint64_t k = q; k < q + n; k++) any |= fresh[k];
    if (any && s->plen[q]) {
      dev_unmap(st->dev, s->vbase + q * ST_PAGE, n * ST_PAGE);
      s->plen[q] = 0;
      for (uint64_t k = q; k < q + n; k++) fresh[k] = 1;
    }
    q += n;
  }
}

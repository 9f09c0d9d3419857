/* pickle_schema.c - what the containers of a PyTorch memory snapshot mean, for the
 * streaming pickle reader:
 *
 *   {'segments': [{'device': d, 'total_size': n, ...}, ...],
 *    'device_traces': [[{'action': 'alloc', 'addr': a, 'size': n, 'stream': s, ...}, ...], ...],
 *    'allocator_settings': {'max_split_size': n, 'roundup_power2_divisions': {'1': k, ...}, ...},
 *    ...}
 *
 * A pickle says which container a value belongs to only after the value (APPEND after
 * the item, SETITEM after the value), so a new container gets every role its place on
 * the stack allows (pk_child_roles), narrowed by its type; fields are kept for any dict
 * that may be an event, a segment or the settings; events are handed out when APPEND(S)
 * puts them into a device's list. The rare shapes where the place was ambiguous are
 * checked when the container is finally consumed: events handed out from a list that
 * turns out not to be device_traces[d] are an error, never silently wrong. */
#include <stdlib.h>
#include <string.h>
#include "pickle.h"

static int hashable(uint8_t type) {
  return type != PK_DICT && type != PK_LIST && type != PK_SET && type != PK_MARK;
}

static uint16_t allowed_for(uint8_t type) {
  switch (type) {
  case PK_DICT: return R_TOP | R_EVENT | R_SEG | R_SET | R_RPD | R_FRAME | R_IGN;
  case PK_LIST: return R_DT | R_DEVLIST | R_SEGS | R_FRAMES | R_IGN;
  default: return R_IGN;
  }
}

/* role of a value stored under key in a dict with these roles */
static uint16_t value_role(uint16_t dict_roles, const struct pk_val *key, int frames) {
  uint8_t tok = key->type == PK_STR ? key->tok : TK_OTHER;
  uint16_t r = 0;
  /* the frames pass: every frames list, an event's and a segment's or block's (PyTorch shares the frame
   * dicts through the memo, so a later event's list can name frames first read there) */
  if (frames && tok == TK_FRAMES) r |= R_FRAMES;
  if (dict_roles & R_TOP)
    r |= tok == TK_DEVICE_TRACES ? R_DT : tok == TK_SEGMENTS ? R_SEGS : tok == TK_ALLOCATOR_SETTINGS ? R_SET : R_IGN;
  if (dict_roles & R_SET) r |= tok == TK_ROUNDUP_POWER2_DIVISIONS ? R_RPD : R_IGN;
  if (dict_roles & (R_EVENT | R_SEG | R_RPD | R_FRAME | R_IGN)) r |= R_IGN;
  return r;
}

/* role of an item of a list with these roles */
static uint16_t elem_role(uint16_t list_roles) {
  uint16_t r = 0;
  if (list_roles & R_DT) r |= R_DEVLIST;
  if (list_roles & R_DEVLIST) r |= R_EVENT;
  if (list_roles & R_SEGS) r |= R_SEG;
  if (list_roles & R_FRAMES) r |= R_FRAME;
  if (list_roles & R_IGN) r |= R_IGN;
  return r;
}

uint16_t pk_child_roles(const struct pk_reader *p, uint8_t type, int32_t *index) {
  uint16_t allowed = allowed_for(type);
  size_t sp = p->sp;
  const struct pk_val *st = p->stack;
  if (sp == 0) return type == PK_DICT ? R_TOP : R_IGN;     /* the pickle's top value */
  uint16_t r = 0, ri;
  long mk = p->mark;
  /* an item of the region after the last MARK, for the container under that MARK */
  if (mk >= 1) {
    const struct pk_val *c = &st[mk - 1];
    size_t n = sp - (size_t)mk - 1;
    if (c->type == PK_DICT) {
      if (n & 1) {
        if (hashable(st[sp - 1].type)) r |= value_role(c->roles, &st[sp - 1], p->fr != NULL) & allowed;
      } else if (hashable(type)) {
        r |= R_IGN;                                         /* a key */
      }
    } else if (c->type == PK_LIST) {
      ri = elem_role(c->roles) & allowed;
      if (ri & R_DEVLIST) *index = (int32_t)(c->nelems + n);
      r |= ri;
    } else {
      r |= R_IGN;                                           /* a set, or a TUPLE/LIST/DICT to be */
    }
  } else if (mk == 0) {
    r |= R_IGN;
  }
  /* the single item of an APPEND onto the list below, or the key/value of a SETITEM */
  if ((long)sp - 1 != mk) {
    const struct pk_val *t = &st[sp - 1];
    if (t->type == PK_LIST) {
      ri = elem_role(t->roles) & allowed;
      if (ri & R_DEVLIST) *index = (int32_t)t->nelems;
      r |= ri;
    } else if (t->type == PK_DICT && hashable(type)) {
      r |= R_IGN;
    }
    if (sp >= 2 && (long)sp - 2 != mk && st[sp - 2].type == PK_DICT && hashable(t->type))
      r |= value_role(st[sp - 2].roles, t, p->fr != NULL) & allowed;
  }
  r &= allowed;
  return r ? r : (allowed & R_IGN);
}

/* ---- fields ---- */

static void bad_field(struct pk_rec *rec, uint8_t f, const struct pk_val *v) {
  if (!rec->bad) rec->bad_type = v->type;
  rec->bad |= f;
}

static void int_field(struct pk_rec *rec, uint8_t f, int64_t *dst, const struct pk_val *v) {
  if (v->type == PK_INT) {
    *dst = v->v.i;
    rec->has |= f;
  } else {
    bad_field(rec, f, v);
  }
}

static void event_field(struct pk_rec *rec, uint8_t tok, const struct pk_val *v) {
  switch (tok) {
  case TK_ACTION:
    if (v->type == PK_STR || v->type == PK_REF) {   /* a REF is a string we did not keep: unknown */
      rec->action = v->type == PK_STR && v->tok >= TK_ALLOC && v->tok <= TK_USER_DEFINED ? v->tok : TK_OTHER;
      rec->has |= F_ACTION;
    } else {
      bad_field(rec, F_ACTION, v);
    }
    break;
  case TK_ADDR: int_field(rec, F_ADDR, &rec->addr, v); break;
  case TK_SIZE: int_field(rec, F_SIZE, &rec->size, v); break;
  case TK_STREAM: int_field(rec, F_STREAM, &rec->stream, v); break;
  case TK_DEVICE_FREE: int_field(rec, F_DEVFREE, &rec->device_free, v); break;
  case TK_TIME_US: case TK_COMPILE_CONTEXT: case TK_USER_METADATA: case TK_FRAMES: case TK_DEVICE:
    break;                                          /* known, not needed */
  default:
    if (rec->ignored_keys < UINT16_MAX) rec->ignored_keys++;
  }
}

static void segment_field(struct pk_rec *rec, uint8_t tok, const struct pk_val *v) {
  if (tok == TK_TOTAL_SIZE) int_field(rec, F_TOTAL, &rec->total_size, v);
  else if (tok == TK_DEVICE) int_field(rec, F_DEVICE, &rec->seg_device, v);
  else if (tok == TK_ADDRESS) int_field(rec, F_ADDR, &rec->addr, v);
  else if (tok == TK_STREAM) int_field(rec, F_STREAM, &rec->stream, v);
  else if (tok == TK_SEGMENT_POOL_ID && v->type == PK_TUPLE && v->tok == PK_PAIR) {
    rec->pool_id = v->v.i;
    rec->has |= F_POOL;
  }
}

/* a segment of the segments list, for the pools of the addresses it spans: 0, or -1 */
static int keep_segment(struct pk_reader *p, const struct pk_rec *r, char *err) {
  if (!(r->has & F_ADDR) || r->addr < 0 || r->total_size <= 0) return 0;
  if (p->nsegs == p->segs_cap) {
    size_t nc = p->segs_cap ? 2 * p->segs_cap : 64;
    struct pk_seg *ns = realloc(p->segs, nc * sizeof *ns);
    if (!ns) return pk_fail(p, err, "out of memory (%zu segments)", nc);
    p->segs = ns;
    p->segs_cap = nc;
  }
  p->segs[p->nsegs++] = (struct pk_seg){.addr = r->addr, .size = r->total_size, .stream = r->has & F_STREAM ? r->stream : 0,
                                        .pool_id = r->has & F_POOL ? r->pool_id : 0,
                                        .device = r->has & F_DEVICE ? (int)r->seg_device : 0};
  return 0;
}

static int top_field(struct pk_reader *p, uint8_t tok, const struct pk_val *v, char *err) {
  switch (tok) {
  case TK_DEVICE_TRACES:
    if (v->type != PK_LIST)
      return pk_fail(p, err, "device_traces: expected a list of per-device event lists, got %s", pk_type_name(v->type));
    if (p->dt_seen) return pk_fail(p, err, "device_traces given twice in the top-level dict");
    p->dt_seen = 1;
    return 0;
  case TK_SEGMENTS:
    if (v->type != PK_LIST) return pk_fail(p, err, "segments: expected a list of segment dicts, got %s", pk_type_name(v->type));
    p->segs_seen = 1;
    return 0;
  case TK_ALLOCATOR_SETTINGS:
    if (v->type != PK_DICT) return pk_fail(p, err, "allocator_settings: expected a dict, got %s", pk_type_name(v->type));
    p->settings.seen = 1;
    return 0;
  default:
    p->ignored_top++;
    return 0;
  }
}

static int settings_field(struct pk_reader *p, uint8_t tok, const struct pk_val *v, char *err) {
  struct pk_settings *s = &p->settings;
  switch (tok) {
  case TK_MAX_SPLIT_SIZE:
    if (v->type == PK_BIGINT) {              /* beyond 64 bits: no limit */
      s->max_split_size = -1;
    } else if (v->type == PK_INT) {
      /* PyTorch refuses max_split_size_mb of 20 MiB or less; SIZE_MAX (no limit) reads
       * as a big int, or as -1 when a writer stored it signed */
      if (v->v.i != -1 && (v->v.i < 0 || v->v.i < (int64_t)21 << 20))
        return pk_fail(p, err, "allocator_settings.max_split_size is %lld: expected at least 21 MiB (22020096) or no limit, as "
                               "PyTorch accepts", (long long)v->v.i);
      s->max_split_size = v->v.i;
    } else {
      return pk_fail(p, err, "allocator_settings.max_split_size: expected an int, got %s", pk_type_name(v->type));
    }
    s->has_max_split_size = 1;
    return 0;
  case TK_GC_THRESHOLD:
    if (v->type == PK_FLOAT) s->gc_threshold = v->v.f;
    else if (v->type == PK_INT) s->gc_threshold = (double)v->v.i;
    else return pk_fail(p, err, "allocator_settings.garbage_collection_threshold: expected a number, got %s", pk_type_name(v->type));
    /* 0 is off; PyTorch takes 0 < t < 1 */
    if (!(s->gc_threshold >= 0 && s->gc_threshold < 1))
      return pk_fail(p, err, "allocator_settings.garbage_collection_threshold is %g: expected 0 (off) or a fraction between 0 and 1",
                     s->gc_threshold);
    s->has_gc_threshold = 1;
    return 0;
  case TK_EXPANDABLE_SEGMENTS:
    if (v->type != PK_BOOL && v->type != PK_INT)
      return pk_fail(p, err, "allocator_settings.expandable_segments: expected a bool, got %s", pk_type_name(v->type));
    s->expandable = v->v.i != 0;
    s->has_expandable = 1;
    return 0;
  case TK_ROUNDUP_POWER2_DIVISIONS:
    if (v->type != PK_DICT)
      return pk_fail(p, err, "allocator_settings.roundup_power2_divisions: expected a dict {'1': n, ..., '32768': n}, got %s",
                     pk_type_name(v->type));
    memcpy(s->roundup, p->rpd_pending, sizeof s->roundup);
    s->has_roundup = 1;
    memset(p->rpd_pending, 0, sizeof p->rpd_pending);
    return 0;
  default:
    return 0;
  }
}

static int roundup_field(struct pk_reader *p, const struct pk_val *k, const struct pk_val *v, char *err) {
  int64_t key = k->v.i;
  if (k->type != PK_STR || k->tok != TK_NUM || key < 1 || key > 32768 || (key & (key - 1)))
    return pk_fail(p, err, "allocator_settings.roundup_power2_divisions: expected keys '1', '2', '4', ..., '32768' (MiB)");
  if (v->type != PK_INT || v->v.i < 0)
    return pk_fail(p, err, "allocator_settings.roundup_power2_divisions['%lld']: expected a non-negative int, got %s",
                   (long long)key, pk_type_name(v->type));
  p->rpd_pending[__builtin_ctzll((unsigned long long)key)] = v->v.i;
  return 0;
}

int pk_schema_consume(struct pk_reader *p, const struct pk_val *v, const char *how, char *err) {
  (void)v;
  return pk_fail(p, err, "%s: events were read from a list that turns out not to be device_traces[d] "
                 "(expected a top-level dict whose device_traces is a list of lists of event dicts)", how);
}

int pk_schema_setitems(struct pk_reader *p, struct pk_val *dict, struct pk_val *kv, size_t n, char *err) {
  uint16_t roles = dict->roles;
  for (size_t i = 0; i < n; i++) {
    const struct pk_val *k = &kv[2 * i], *v = &kv[2 * i + 1];
    uint8_t tok = k->type == PK_STR ? k->tok : TK_OTHER;
    if (k->emitted && pk_schema_consume(p, k, "a dict key", err)) return -1;
    if (v->emitted && !((roles & R_TOP) && tok == TK_DEVICE_TRACES) && pk_schema_consume(p, v, "a dict value", err))
      return -1;
    if (tok == TK_FRAMES && !(roles & R_EVENT) && pk_frames_list_is_current(p, v))
      pk_frames_list_saved(p);                      /* a block's stack in the segments list: the trace names it again */
    if (!(roles & (R_TOP | R_EVENT | R_SEG | R_SET | R_RPD | R_FRAME))) continue;
    if (roles & R_EVENT) {
      event_field(&dict->rec, tok, v);
      if (tok == TK_ACTION && v->type == PK_STR && v->tok == TK_OTHER && !p->unknown_action[0] && v->offset == p->last_short_off)
        memcpy(p->unknown_action, p->last_short, sizeof p->unknown_action);
      if (tok == TK_FRAMES && pk_frames_list_is_current(p, v)) dict->rec.has_frames = 1;
      if (tok == TK_FRAMES && p->fr && v->type == PK_LIST && (v->roles & R_FRAMES) && v->v.i < 0)
        dict->rec.saved_frames = (uint32_t)-v->v.i;
    }
    if ((roles & R_FRAME) && p->fr && dict->index > 0) pk_frames_field(p, (uint32_t)dict->index, tok, v);
    if (roles & R_SEG) {
      segment_field(&dict->rec, tok, v);
      if (tok == TK_SEGMENT_POOL_ID && !(v->type == PK_TUPLE && v->tok == PK_PAIR) && v->type != PK_REF) p->bad_pool_ids++;
    }
    if ((roles & R_TOP) && top_field(p, tok, v, err)) return -1;
    if ((roles & R_SET) && settings_field(p, tok, v, err)) return -1;
    if ((roles & R_RPD) && roundup_field(p, k, v, err)) return -1;
  }
  if (p->fr && (roles & R_EVENT) && (dict->rec.action == TK_OOM || (dict->rec.action == TK_ALLOC && pk_frames_allocs(p))) &&
      !dict->rec.frames_ref) {
    if (dict->rec.has_frames) dict->rec.frames_ref = pk_frames_oom_text(p);   /* the frames pass: the failing request's stack
                                                                                 (and allocs', when kept) */
    else if (dict->rec.saved_frames) dict->rec.frames_ref = pk_frames_dup(p, dict->rec.saved_frames);
  }
  return 0;
}

int pk_schema_appends(struct pk_reader *p, struct pk_val *list, struct pk_val *items, size_t n, char *err) {
  uint16_t roles = list->roles;
  for (size_t i = 0; i < n; i++) {
    struct pk_val *it = &items[i];
    uint64_t at = list->nelems + i;
    if ((roles & R_FRAMES) && pk_frames_list_is_current(p, list))   /* the frames pass */
      pk_frames_list_add(p, it->type == PK_DICT && (it->roles & R_FRAME) && it->index > 0 ? (uint32_t)it->index
                            : it->type == PK_FRAMEREF ? (uint32_t)it->v.i : 0);
    if (roles & R_DEVLIST) {
      if (list->index < 0 || list->index >= PK_MAX_DEVICES)
        return pk_fail(p, err, "device_traces: more than %d devices", PK_MAX_DEVICES);
      if (it->type == PK_DICT && (it->roles & R_EVENT)) {
        it->rec.device = list->index;
        it->rec.index = at;
        it->rec.offset = it->offset;
        if (pk_queue_push(p, &it->rec, err)) return -1;
        list->emitted = 1;
      } else if (roles == R_DEVLIST) {
        return pk_fail(p, err, "device_traces[%d][%llu]: expected an event dict, got %s", list->index,
                       (unsigned long long)at, pk_type_name(it->type));
      } else {
        if (list->emitted) return pk_schema_consume(p, list, "a list", err);
        roles &= (uint16_t)~R_DEVLIST;
      }
    }
    if (roles & R_DT) {
      if (it->type == PK_LIST && (it->roles & R_DEVLIST) && it->index >= 0 && (uint64_t)it->index == at) {
        if (it->emitted) list->emitted = 1;
        if (at >= PK_MAX_DEVICES) return pk_fail(p, err, "device_traces: more than %d devices", PK_MAX_DEVICES);
        continue;
      }
      if (roles == R_DT)
        return pk_fail(p, err, "device_traces[%llu]: expected a list of event dicts, got %s", (unsigned long long)at,
                       pk_type_name(it->type));
      if (list->emitted) return pk_schema_consume(p, list, "a list", err);
      roles &= (uint16_t)~R_DT;
    }
    if (it->emitted) return pk_schema_consume(p, it, "a list item", err);
    if ((roles & R_SEGS) && it->type == PK_DICT && (it->roles & R_SEG) && (it->rec.has & F_TOTAL)) {
      int64_t d = it->rec.has & F_DEVICE ? it->rec.seg_device : 0;
      if (d >= 0 && d < PK_MAX_DEVICES && it->rec.total_size > 0) p->seg_total[d] += (uint64_t)it->rec.total_size;
      if (keep_segment(p, &it->rec, err)) return -1;
    }
  }
  list->roles = roles;
  list->nelems += n;
  return 0;
}

int pk_schema_stop(struct pk_reader *p, const struct pk_val *top, char *err) {
  if (top->type != PK_DICT || !(top->roles & R_TOP))
    return pk_fail(p, err, "STOP: expected a dict at the top level (a PyTorch memory snapshot), got %s",
                   pk_type_name(top->type));
  if (!p->dt_seen)
    return pk_fail(p, err, "STOP: the top-level dict has no 'device_traces' key: not a PyTorch memory snapshot "
                   "(expected torch.cuda.memory._dump_snapshot output)");
  return 0;
}

/* pickle_vocab.c - the strings of a PyTorch snapshot whose text the reader needs (dict
 * keys, action names, allocator_settings keys, small decimal numbers), as tokens. The
 * memo keeps only these, so it stays a few dozen entries however long the trace. */
#include <string.h>
#include "pickle.h"

struct word { const char *text; uint8_t len; };
#define W(s) {s, sizeof(s) - 1}
static const struct word vocab[TK_COUNT] = {
  [TK_OTHER] = W(""), [TK_NUM] = W(""),
  [TK_SEGMENTS] = W("segments"), [TK_DEVICE_TRACES] = W("device_traces"),
  [TK_ALLOCATOR_SETTINGS] = W("allocator_settings"), [TK_EXTERNAL_ANNOTATIONS] = W("external_annotations"),
  [TK_ACTION] = W("action"), [TK_ADDR] = W("addr"), [TK_SIZE] = W("size"), [TK_STREAM] = W("stream"),
  [TK_TIME_US] = W("time_us"), [TK_COMPILE_CONTEXT] = W("compile_context"),
  [TK_USER_METADATA] = W("user_metadata"), [TK_FRAMES] = W("frames"), [TK_DEVICE_FREE] = W("device_free"),
  [TK_DEVICE] = W("device"), [TK_TOTAL_SIZE] = W("total_size"),
  [TK_ADDRESS] = W("address"), [TK_SEGMENT_POOL_ID] = W("segment_pool_id"), [TK_IS_EXPANDABLE] = W("is_expandable"),
  [TK_ALLOC] = W("alloc"), [TK_FREE_REQUESTED] = W("free_requested"), [TK_FREE_COMPLETED] = W("free_completed"),
  [TK_SEGMENT_ALLOC] = W("segment_alloc"), [TK_SEGMENT_FREE] = W("segment_free"),
  [TK_SEGMENT_MAP] = W("segment_map"), [TK_SEGMENT_UNMAP] = W("segment_unmap"), [TK_OOM] = W("oom"),
  [TK_SNAPSHOT] = W("snapshot"), [TK_USER_DEFINED] = W("user_defined"),
  [TK_MAX_SPLIT_SIZE] = W("max_split_size"), [TK_GC_THRESHOLD] = W("garbage_collection_threshold"),
  [TK_EXPANDABLE_SEGMENTS] = W("expandable_segments"),
  [TK_ROUNDUP_POWER2_DIVISIONS] = W("roundup_power2_divisions"),
  [TK_NAME] = W("name"), [TK_FILENAME] = W("filename"), [TK_LINE] = W("line"),
};

enum pk_tok pk_vocab_token(const uint8_t *s, size_t n, int64_t *num) {
  if (n == 0 || n > 32) return TK_OTHER;
  if (s[0] >= '0' && s[0] <= '9') {
    if (n > 9 || (s[0] == '0' && n > 1)) return TK_OTHER;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
      if (s[i] < '0' || s[i] > '9') return TK_OTHER;
      v = v * 10 + (s[i] - '0');
    }
    *num = v;
    return TK_NUM;
  }
  for (int t = TK_SEGMENTS; t < TK_COUNT; t++)
    if (vocab[t].len == n && vocab[t].text[0] == s[0] && !memcmp(vocab[t].text, s, n)) return (enum pk_tok)t;
  return TK_OTHER;
}

const char *pk_vocab_text(enum pk_tok t) { return t < TK_COUNT ? vocab[t].text : ""; }

const char *pk_type_name(enum pk_type t) {
  switch (t) {
  case PK_MARK: return "MARK";
  case PK_NONE: return "None";
  case PK_BOOL: return "bool";
  case PK_INT: return "int";
  case PK_BIGINT: return "int beyond 64 bits";
  case PK_FLOAT: return "float";
  case PK_STR: return "str";
  case PK_BYTES: return "bytes";
  case PK_DICT: return "dict";
  case PK_LIST: return "list";
  case PK_TUPLE: return "tuple";
  case PK_SET: return "set";
  case PK_REF: return "memo reference to an earlier object";
  case PK_FRAMEREF: return "memo reference to a stack frame";
  }
  return "?";
}

/* the name of an opcode the reader refuses (objects, persistent ids, protocol 0, out-of-band
 * buffers), or NULL */
const char *pk_unsupported_opcode(int op) {
  switch (op) {
  case 'c': return "GLOBAL";
  case 0x93: return "STACK_GLOBAL";
  case 'R': return "REDUCE";
  case 'b': return "BUILD";
  case 0x81: return "NEWOBJ";
  case 0x92: return "NEWOBJ_EX";
  case 'i': return "INST";
  case 'o': return "OBJ";
  case 'P': return "PERSID";
  case 'Q': return "BINPERSID";
  case 0x82: case 0x83: case 0x84: return "EXT";
  case 'I': return "INT (protocol 0)";
  case 'L': return "LONG (protocol 0)";
  case 'S': return "STRING (protocol 0)";
  case 'V': return "UNICODE (protocol 0)";
  case 'F': return "FLOAT (protocol 0)";
  case 'p': return "PUT (protocol 0)";
  case 'g': return "GET (protocol 0)";
  case 0x97: return "NEXT_BUFFER";
  case 0x98: return "READONLY_BUFFER";
  }
  return NULL;
}

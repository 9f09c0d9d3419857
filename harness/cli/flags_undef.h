/* flags_undef.h - ends one expansion of flags.def: undefines its kinds' macros, so the
 * next expansion (cli.h, options.c) defines its own. No include guard: included after
 * each expansion. */
#undef SWITCH
#undef TEXT
#undef WORD
#undef ENUM
#undef PUSH
#undef CAP
#undef UINT
#undef REAL
#undef CHECKED
#undef HOOK

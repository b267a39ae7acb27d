/*
 * theme_builtin.h - theme texts compiled into the binary so the dashboard
 * runs without any theme file (TUI.md section 6).  Generated from
 * themes/default-dark.theme and themes/mono.theme by themes/gen_builtin.sh.
 */
#ifndef GP_TUI_THEME_BUILTIN_H
#define GP_TUI_THEME_BUILTIN_H

extern const char theme_builtin_default_dark[];
extern const char theme_builtin_mono[];

#endif

/*
 * net_backoff.h - the dashboard's reconnect delay (TUI.md §3): 1, 2, 4, 8,
 * 16, 30 s cap (times the time scale), raised to the server's `retry:`
 * when that is longer, then ±20 % jitter.  A pure function, so the
 * sequence and the jitter bounds are unit-tested directly.
 */
#ifndef GP_TUI_NET_BACKOFF_H
#define GP_TUI_NET_BACKOFF_H

#define NET_BACKOFF_BASE_S 1.0
#define NET_BACKOFF_CAP_S  30.0
#define NET_BACKOFF_JITTER 0.2   /* ±20 % */
#define NET_RETRY_HONOUR_S 300.0 /* a server retry above this is cut to it */

/*
 * The delay in seconds before the next attempt after `fails` consecutive
 * failures (1 = the first failure; 0 is treated as 1).  The table steps
 * are multiplied by scale (GENUPROOF_TIME_SCALE; <= 0 means 1); the
 * server's retry is already a real duration (the server scales what it
 * sends) and is used as is; server_retry_ms < 0 means none was sent.
 * u in [0, 1) picks the jitter: 0 gives -20 %, 0.5 none, just under 1
 * gives +20 % (anything else: none).  Never below 0.001 s.
 */
double net_backoff_delay(unsigned fails, long server_retry_ms, double u, double scale);

#endif

/*
 * net_backoff.c - reconnect delay with the server's retry and jitter
 * (net_backoff.h).  The doubling itself is util/backoff.h's step.
 */
#include "tui/net_backoff.h"

#include "util/backoff.h"

double net_backoff_delay(unsigned fails, long server_retry_ms, double u, double scale)
{
    double d = 0;

    if (fails == 0)
        fails = 1;
    for (unsigned i = 0; i < fails && d < NET_BACKOFF_CAP_S; i++)
        d = backoff_next(d, NET_BACKOFF_BASE_S, NET_BACKOFF_CAP_S);
    d *= scale > 0 ? scale : 1.0;
    if (server_retry_ms >= 0) {
        double r = (double)server_retry_ms / 1000.0;
        if (r > NET_RETRY_HONOUR_S)
            r = NET_RETRY_HONOUR_S;
        if (r > d)
            d = r;
    }
    if (!(u >= 0.0) || u >= 1.0)
        u = 0.5;
    d *= 1.0 - NET_BACKOFF_JITTER + 2.0 * NET_BACKOFF_JITTER * u;
    return d < 0.001 ? 0.001 : d;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * kvod-proxy's clock and log, which every part uses: messages go to
 * stderr, or to syslog once the proxy has become a daemon.
 */
#include "kvod-proxy.h"

#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>
#include <time.h>

static int log_to_syslog;

int64_t proxy_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

void proxy_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (log_to_syslog) {
		vsyslog(LOG_NOTICE, fmt, ap);
	} else {
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}

/* From now on, log to syslog (a daemon has no stderr). */
void proxy_log_to_syslog(void)
{
	openlog("kvod-proxy", LOG_PID, LOG_DAEMON);
	log_to_syslog = 1;
}

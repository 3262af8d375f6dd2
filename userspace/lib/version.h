/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AGENTD_VERSION_H
#define AGENTD_VERSION_H

/* The release; the Makefile reads it from here (make deb, make install). */
#define AGENTD_VERSION "0.1.0"

#endif

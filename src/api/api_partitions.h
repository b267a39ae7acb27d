/*
 * api_partitions.h - GET /api/admin/partitions (ADMIN): the store's
 * capacity accounting by key family, for the dashboard's partition heat
 * view.  The route is listed in api_admin_routes[] (api_admin.c).
 */
#ifndef GP_API_API_PARTITIONS_H
#define GP_API_API_PARTITIONS_H

#include "api/api.h"

/* Top keys returned by default and at most (?limit=). */
#define PARTITIONS_TOP_DEFAULT 20
#define PARTITIONS_TOP_MAX     100
/* Keys examined for the per-family figures (the accounting's own cap). */
#define PARTITIONS_KEYS_MAX 4096

void api_admin_partitions(struct api_req *r);

#endif

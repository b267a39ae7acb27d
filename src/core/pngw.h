/*
 * pngw.h - a small PNG writer over libpng that streams into a capped
 * struct buf (used by qr.c and ogcard.c).
 *
 * The caller supplies the pixels one row at a time through a callback,
 * so no second copy of the image is needed.  libpng reports errors with
 * longjmp(); that stays inside pngw.c.
 */
#ifndef GP_CORE_PNGW_H
#define GP_CORE_PNGW_H

#include "util/buf.h"

/* Largest edge accepted (pixels). */
#define PNGW_MAX_EDGE 8192

enum pngw_format {
    PNGW_GRAY1, /* 1 bit per pixel, MSB first, 1 = white */
    PNGW_RGB8   /* 3 bytes per pixel: R, G, B */
};

/* Fills row y (0-based, top first) of the image: (width + 7) / 8 bytes
 * for PNGW_GRAY1, 3 * width for PNGW_RGB8. */
typedef void (*pngw_row_fn)(void *arg, int y, unsigned char *row);

/*
 * Appends a PNG of width x height pixels to out, compressed with zlib
 * level zlevel (0-9; 1 is fast and plenty for flat artwork).  On success
 * returns 0.  On error returns ERR_INVALID (size or level out of range),
 * ERR_TOOBIG (out's cap) or ERR_INTERNAL (libpng), and out keeps its
 * previous content.
 */
int pngw_write(struct buf *out, int width, int height, enum pngw_format fmt, int zlevel,
               pngw_row_fn fn, void *arg);

#endif

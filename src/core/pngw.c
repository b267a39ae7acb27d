/*
 * pngw.c - PNG encoding into memory with libpng (pngw.h).
 *
 * libpng signals errors by longjmp() out of its calls, including out of
 * our write callback when the output buffer reaches its cap.  All libpng
 * calls that may jump live in pngw_run(), whose locals do not change
 * after setjmp(); the error code travels in the job struct.  Warnings
 * and errors are not printed (libpng's default writes to stderr).
 */
#include "core/pngw.h"

#include <setjmp.h>
#include <stdbool.h>
#include <stdlib.h>

#include <png.h>

#include "util/err.h"
#include "util/xalloc.h"

struct pngw_job {
    struct buf *out;
    int err; /* first sink error */
    int width, height, zlevel;
    enum pngw_format fmt;
    pngw_row_fn fn;
    void *arg;
    unsigned char *row;
};

static void sink_write(png_structp png, png_bytep data, size_t n)
{
    struct pngw_job *j = png_get_io_ptr(png);
    int rc = buf_append(j->out, data, n);
    if (rc) {
        j->err = rc;
        png_error(png, "output buffer full");
    }
}

static void sink_flush(png_structp png)
{
    (void)png;
}

static void on_error(png_structp png, png_const_charp msg)
{
    (void)msg;
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

/* The part that may longjmp.  Nothing declared here is used after a
 * jump except j, which is not modified by this function. */
static int pngw_run(struct pngw_job *j, png_structp png, png_infop info)
{
    bool gray = j->fmt == PNGW_GRAY1;

    if (setjmp(png_jmpbuf(png)))
        return j->err ? j->err : ERR_INTERNAL;
    png_set_write_fn(png, j, sink_write, sink_flush);
    png_set_compression_level(png, j->zlevel);
    /* Flat artwork: the Sub filter is cheap and compresses runs well. */
    png_set_filter(png, PNG_FILTER_TYPE_BASE, gray ? PNG_FILTER_NONE : PNG_FILTER_SUB);
    png_set_IHDR(png, info, (png_uint_32)j->width, (png_uint_32)j->height, gray ? 1 : 8,
                 gray ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < j->height; y++) {
        j->fn(j->arg, y, j->row);
        png_write_row(png, j->row);
    }
    png_write_end(png, NULL);
    return 0;
}

int pngw_write(struct buf *out, int width, int height, enum pngw_format fmt, int zlevel,
               pngw_row_fn fn, void *arg)
{
    struct pngw_job j = {.out = out,
                         .width = width,
                         .height = height,
                         .zlevel = zlevel,
                         .fmt = fmt,
                         .fn = fn,
                         .arg = arg};
    size_t start = out->len, rowlen;
    png_structp png = NULL;
    png_infop info = NULL;
    int rc;

    if (width <= 0 || height <= 0 || width > PNGW_MAX_EDGE || height > PNGW_MAX_EDGE ||
        zlevel < 0 || zlevel > 9 || !fn || (fmt != PNGW_GRAY1 && fmt != PNGW_RGB8))
        return ERR_INVALID;
    rowlen = fmt == PNGW_GRAY1 ? ((size_t)width + 7) / 8 : 3 * (size_t)width;
    j.row = xcalloc(1, rowlen);
    png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, on_error, on_warning);
    if (png)
        info = png_create_info_struct(png);
    if (!png || !info) {
        rc = ERR_INTERNAL;
        goto out;
    }
    rc = pngw_run(&j, png, info);
out:
    png_destroy_write_struct(&png, &info);
    free(j.row);
    if (rc) {
        out->len = start;
        if (out->data)
            out->data[start] = '\0';
    }
    return rc;
}

/*
 * fsync_dir.h - making a file's name durable.
 *
 * fsync() of a file makes its data durable, not its directory entry: a file
 * just created can vanish in a power cut until its directory is synced too.
 */
#ifndef GENUPROOF_UTIL_FSYNC_DIR_H
#define GENUPROOF_UTIL_FSYNC_DIR_H

/* fsync of directory dir.  0, or -1 with errno set. */
int fsync_dir(const char *dir);

/* fsync of the directory that holds path ("." for a bare name).  0, or -1
 * with errno set. */
int fsync_parent_dir(const char *path);

#endif

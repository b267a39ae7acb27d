/*
 * replay_main.c - runs a libFuzzer target over every file of a corpus
 * directory (and, with no corpus, over a few built-in edge inputs) under
 * gcc + sanitizers, as a regular test.  Prints one TAP line per input.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int n_run;

static void run_buf(const char *name, const uint8_t *data, size_t size)
{
    /* Copy into an exact-size heap block so ASan catches over-reads. */
    uint8_t *copy = malloc(size ? size : 1);
    if (size)
        memcpy(copy, data, size);
    LLVMFuzzerTestOneInput(copy, size);
    free(copy);
    printf("ok %d - %s\n", ++n_run, name);
}

static void run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("not ok %d - cannot open %s\n", ++n_run, path);
        return;
    }
    uint8_t *data = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 4096;
            data = realloc(data, cap);
        }
        size_t r = fread(data + len, 1, cap - len, f);
        if (!r)
            break;
        len += r;
    }
    fclose(f);
    run_buf(path, data, len);
    free(data);
}

int main(int argc, char **argv)
{
    static const char *edge[] = {
        "", "\0", "{", "[", "\"", "\xff\xfe", "{\"a\":1e999}", "GET / HTTP/1.1\r\n\r\n"};
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
        run_buf("built-in edge input", (const uint8_t *)edge[i], strlen(edge[i]));
    for (int a = 1; a < argc; a++) {
        DIR *d = opendir(argv[a]);
        if (!d) {
            struct stat st;
            if (stat(argv[a], &st) == 0)
                run_file(argv[a]);
            continue;
        }
        struct dirent *e;
        char **names = NULL;
        size_t n = 0;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            names = realloc(names, (n + 1) * sizeof *names);
            names[n] = malloc(strlen(argv[a]) + strlen(e->d_name) + 2);
            sprintf(names[n], "%s/%s", argv[a], e->d_name);
            n++;
        }
        closedir(d);
        for (size_t i = 0; i < n; i++) {
            run_file(names[i]);
            free(names[i]);
        }
        free(names);
    }
    printf("1..%d\n", n_run);
    return 0;
}

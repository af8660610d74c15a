/* version.c — `vigil version [--json]`: the program's version and the data
 * directory it reads the bundled advisory database and catalog from. */
#include "cmd/cmd.h"
#include "util/datadir.h"
#include "util/jsonutil.h"
#include <stdio.h>
#include <string.h>

#ifndef VIGIL_VERSION
#define VIGIL_VERSION "0.1.0"
#endif

int cmd_version(int argc, char **argv)
{
    int json = argc > 1 && strcmp(argv[1], "--json") == 0;
    if (argc > 1 && !json) {
        fprintf(stderr, "vigil: usage: vigil version [--json]\n");
        return 2;
    }
    if (json) {
        json_t *j = json_pack("{s:s, s:s}", "version", VIGIL_VERSION, "data_dir", vg_data_dir());
        return vg_json_print(stdout, j, 0) ? 2 : 0;
    }
    printf("vigil %s (data: %s)\n", VIGIL_VERSION, vg_data_dir());
    return 0;
}

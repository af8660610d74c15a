/* version.c — `vigil version [--json]`: the program's version and the data
 * directory it reads the bundled advisory database and catalog from. */
#include "cmd/cmd.h"
#include "util/datadir.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#ifndef VIGIL_VERSION
#define VIGIL_VERSION "0.1.0"
#endif

int cmd_version(int argc, char **argv)
{
    static const struct option opts[] = { { "json", no_argument, 0, 'j' }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    int c, json = 0;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1)
        if (c == 'j') json = 1;
        else if (c == 'h') return fputs("usage: vigil version [--json]   (also: vigil --version)\n"
                                        "The program's version and the data directory it reads its bundled advisory\n"
                                        "database and fault catalog from ($VIGIL_DATA overrides it).  Exit 0.\n", stdout), 0;
        else return vg_input_error("usage: vigil version [--json]");
    if (optind < argc) return vg_input_error("usage: vigil version [--json]");
    if (json) {
        json_t *j = json_pack("{s:s, s:s}", "version", VIGIL_VERSION, "data_dir", vg_data_dir());
        return vg_json_print(stdout, j, 0) ? VG_EXIT_INPUT : VG_EXIT_OK;
    }
    printf("vigil %s (data: %s)\n", VIGIL_VERSION, vg_data_dir());
    return 0;
}

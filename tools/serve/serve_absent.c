/*
 * `genie serve` in a build without libmicrohttpd or cJSON (CMake found
 * them missing): say so and exit with the usage status.
 */
#include <stdio.h>

#include "../cli.h"

int cmd_serve(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fputs("genie serve: this genie was built without server support (it needs libmicrohttpd and cJSON:\n"
          "Debian packages libmicrohttpd-dev and libcjson-dev; then configure and build again)\n",
          stderr);
    return CLI_EXIT_USAGE;
}

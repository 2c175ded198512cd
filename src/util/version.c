/* The library version, set by the build. */
#include "genie/genie.h"

const char *genie_version(void)
{
    return GENIE_VERSION;
}

/*
 * The slots of an opened index (index.h): per device, and the front-ends'
 * derived state; created with the index, freed at close.
 */
#include <stdlib.h>

#include "index/index.h"
#include "util/error.h"

index_device *index_devices_new(void)
{
    index_device *aDev = calloc(INDEX_MAX_DEVICES, sizeof *aDev);
    for (int i = 0; aDev && i < INDEX_MAX_DEVICES; i++)
        pthread_mutex_init(&aDev[i].lock, NULL);
    return aDev;
}

void index_devices_free(index_device *aDev)
{
    if (!aDev)
        return;
    for (int i = 0; i < INDEX_MAX_DEVICES; i++) {
        index_slots_release(aDev[i].aSlot);
        pthread_mutex_destroy(&aDev[i].lock);
    }
    free(aDev);
}

index_slot *index_device_slot(index_device *d, const void *owner, void (*xFree)(void *p))
{
    pthread_mutex_lock(&d->lock);
    index_slot *s = index_slot_claim(d->aSlot, owner);
    if (!s) {
        pthread_mutex_unlock(&d->lock);
        util_error(GENIE_ENOMEM, "every one of the index's %d device slots is taken", INDEX_SLOTS);
        return NULL;
    }
    index_slot_hold(s, xFree);
    return s;
}

void index_slots_release(index_slot *aSlot)
{
    for (int i = 0; i < INDEX_SLOTS; i++) {
        if (aSlot[i].p && aSlot[i].xFree)
            aSlot[i].xFree(aSlot[i].p);
        aSlot[i].p = NULL;
        aSlot[i].xFree = NULL;
    }
}

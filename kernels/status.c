/* Names of kern_status values, shared by every backend. */
#include "kern.h"

const char *kern_status_name(kern_status s)
{
    switch (s) {
    case KERN_OK: return "KERN_OK";
    case KERN_E_NOMEM: return "KERN_E_NOMEM";
    case KERN_E_UNSUPPORTED: return "KERN_E_UNSUPPORTED";
    case KERN_E_SHAPE: return "KERN_E_SHAPE";
    case KERN_E_DEVICE: return "KERN_E_DEVICE";
    }
    return "KERN_E_UNKNOWN";
}

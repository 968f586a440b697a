/* The embedded API description: see openapi.h. */
#include "api/openapi.h"

#include <string.h>

static const char openapi_json[] =
#include "build/gen/openapi_json.inc"
    ;

enum MHD_Result h_openapi(struct req *r, int64_t id)
{
    (void)id;
    return reply_text(r, 200, "application/json", openapi_json, sizeof openapi_json - 1);
}

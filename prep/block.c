#include "prep/block.h"

#include <stdlib.h>

void block_free(struct block *b)
{
    if (b) {
        free(b->data);
        free(b->rows);
        free(b);
    }
}

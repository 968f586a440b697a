/* Unicode NFC normalization of UTF-8 text (ICU), for the tokenizers whose
 * tokenizer.json normalizes so (Qwen2's). Bytes that are not valid UTF-8
 * are kept as they are and cut the text around them: only the valid runs
 * are normalized. */
#ifndef COD_TEXT_NFC_H
#define COD_TEXT_NFC_H

#include <stddef.h>

#include "text/tokenizer.h"

/* out (emptied first) = NFC(text). 0, or -1 with err. */
int nfc_normalize(const unsigned char *text, size_t len, struct tok_text *out, char *err,
                  size_t errlen);

#endif

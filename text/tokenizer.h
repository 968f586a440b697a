/* The tokenizer interface that cod-prep, the trainer's programs (evaluation
 * tasks, instruction data), the tests and the benchmark use.
 *
 * Four tokenizers sit behind it, one file each:
 *   gpt2   byte-level BPE from r50k_base.tiktoken (text/bpe_gpt2.c), vocab 50257
 *   llama  LLaMA-1/2 SentencePiece BPE with byte fallback (text/tokenizer_llama.c), vocab 32000
 *   bytes  one token per byte (text/tokenizer_bytes.c), vocab 257
 *   hf     a pretrained model's own, from its Hugging Face tokenizer.json
 *          (text/tokenizer_hf.c): byte-level BPE (GPT-2, Llama 3, Qwen2) or
 *          SentencePiece-style BPE (Llama 2, Mistral); the vocabulary and doc
 *          token are the file's
 *   sentencepiece  any SentencePiece .model file, through libsentencepiece
 *          (text/tokenizer_sentencepiece.c): T5's spiece.model, LLaMA's tokenizer.model
 *
 * A tokenizer is read-only once open and is shared by every thread; each
 * thread encodes through its own tok_session (scratch memory and a cache).
 * gpt2, llama and bytes are lossless: decode(encode(text)) == text for any
 * bytes, invalid UTF-8 included. sentencepiece is what its model makes it:
 * T5's normalises text (NFKC, whitespace runs made one, newlines gone).
 *
 * In a token stream (a shard), every document is marked by the
 * tokenizer's doc token, before it (TOK_DOC_START): <|endoftext|> (50256)
 * for gpt2 as llm.c does, <s> (1) for llama as LLaMA was trained, 256 for
 * bytes, and a SentencePiece model's <s> where it has one (LLaMA's); or
 * after it (TOK_DOC_END): a SentencePiece model without <s> has its </s>
 * appended to each document, as T5 was trained (</s> 1, pad 0). */
#ifndef COD_TEXT_TOKENIZER_H
#define COD_TEXT_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

/* Where tokenizer files live unless told otherwise (scripts/corpus.sh puts them there). */
#define TOK_DEFAULT_DIR "var/cache/tokenizers"

/* tokenizer_open flags */
#define TOK_NO_CHECKSUM 1u /* accept tokenizer files whose sha256 is not the pinned one */

/* where the doc token goes */
#define TOK_DOC_START 0
#define TOK_DOC_END 1

/* tok_encode / tok_decode flags */
#define TOK_ALLOW_SPECIAL 1u /* gpt2: the text "<|endoftext|>" becomes token 50256 */
#define TOK_CONTINUE 2u      /* the text continues a document cut at tok_split_point():
                                llama adds (encode) or strips (decode) no leading space */

struct tok_ids {
    uint32_t *v;
    size_t n, cap;
};

struct tok_text {
    unsigned char *v;
    size_t n, cap;
};

int tok_ids_reserve(struct tok_ids *a, size_t extra);
int tok_ids_push(struct tok_ids *a, uint32_t id);
void tok_ids_free(struct tok_ids *a);
int tok_text_append(struct tok_text *t, const void *p, size_t n);
void tok_text_free(struct tok_text *t);

struct tokenizer;
struct tok_session;

/* name: "gpt2", "llama", "bytes" or "hf"; dir holds the tokenizer files
 * (NULL: TOK_DEFAULT_DIR); for hf it is the tokenizer.json itself, or a
 * folder holding one. NULL on failure with err naming the file and the
 * fault (for hf: the field of a tokenizer.json of a kind it does not read). */
struct tokenizer *tokenizer_open(const char *name, const char *dir, unsigned flags, char *err,
                                 size_t errlen);
/* The "sentencepiece" tokenizer of a .model file. NULL on failure, as above. */
struct tokenizer *tokenizer_open_model(const char *model, unsigned flags, char *err, size_t errlen);
void tokenizer_close(struct tokenizer *t);

const char *tokenizer_name(const struct tokenizer *t);
uint32_t tokenizer_vocab_size(const struct tokenizer *t);
uint32_t tokenizer_doc_token(const struct tokenizer *t);
/* TOK_DOC_START or TOK_DOC_END */
int tokenizer_doc_token_at(const struct tokenizer *t);
/* Whether transformers' encode() of this tokenizer starts a text with its
 * doc token by default: a tokenizer.json whose post_processor puts it
 * first (Llama 2, Llama 3, Mistral), LLaMA's SentencePiece <s>; not GPT-2's
 * or Qwen2's, nor bytes. */
int tokenizer_adds_doc_token(const struct tokenizer *t);
/* The id that pads a sequence, -1 when the tokenizer has none. */
int64_t tokenizer_pad_token(const struct tokenizer *t);
/* The end-of-text token a model's answer ends with (instruction data, sft/):
 * llama's </s> (2), a SentencePiece model's </s>, a tokenizer.json's </s>,
 * <|endoftext|> or <|end_of_text|>; else the doc token (gpt2's
 * <|endoftext|>, bytes' 256). */
uint32_t tokenizer_end_token(const struct tokenizer *t);
/* Whether a document may be cut at tok_split_point() and its pieces
 * encoded apart; 0: it must be encoded whole. */
int tokenizer_can_cut(const struct tokenizer *t);
/* The files the tokenizer was read from, as "name sha256" lines (may be ""). */
const char *tokenizer_files(const struct tokenizer *t);

struct tok_session *tok_session_new(const struct tokenizer *t, char *err, size_t errlen);
void tok_session_free(struct tok_session *s);

/* Appends the ids of text to out. 0, or -1 with err (out of memory). */
int tok_encode(struct tok_session *s, const unsigned char *text, size_t len, unsigned flags,
               struct tok_ids *out, char *err, size_t errlen);
/* Appends the bytes of ids to out. -1 with err for an id outside the vocabulary. */
int tok_decode(const struct tokenizer *t, const uint32_t *ids, size_t n, unsigned flags,
               struct tok_text *out, char *err, size_t errlen);

/* A cut point near `want` (0 < cut <= len) at which every tokenizer that
 * can cut encodes the two halves exactly as it encodes the whole: a space
 * between two ASCII letters. Returns len when no such point lies in
 * [want, len). */
size_t tok_split_point(const unsigned char *text, size_t len, size_t want);

#endif

// libsentencepiece's calls behind text/sentencepiece.h, which says why this is C++.
#include "text/sentencepiece.h"

#include <sentencepiece_processor.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

struct spm {
    sentencepiece::SentencePieceProcessor sp;
};

extern "C" struct spm *spm_load(const void *model, size_t len, char *err, size_t errlen)
{
    try {
        spm *m = new spm;
        auto st = m->sp.LoadFromSerializedProto(absl::string_view(static_cast<const char *>(model), len));
        if (!st.ok()) {
            snprintf(err, errlen, "not a SentencePiece model: %s", st.ToString().c_str());
            delete m;
            return nullptr;
        }
        return m;
    } catch (const std::exception &e) {
        snprintf(err, errlen, "SentencePiece: %s", e.what());
        return nullptr;
    }
}

extern "C" void spm_free(struct spm *m) { delete m; }

extern "C" int spm_vocab_size(const struct spm *m) { return m->sp.GetPieceSize(); }
extern "C" int spm_bos_id(const struct spm *m) { return m->sp.bos_id(); }
extern "C" int spm_eos_id(const struct spm *m) { return m->sp.eos_id(); }
extern "C" int spm_pad_id(const struct spm *m) { return m->sp.pad_id(); }
extern "C" int spm_unk_id(const struct spm *m) { return m->sp.unk_id(); }

extern "C" int spm_encode(const struct spm *m, const unsigned char *text, size_t len, uint32_t **ids, size_t *n,
                          size_t *cap, char *err, size_t errlen)
{
    try {
        std::vector<int> out;
        auto st = m->sp.Encode(absl::string_view(reinterpret_cast<const char *>(text), len), &out);
        if (!st.ok()) {
            snprintf(err, errlen, "SentencePiece cannot encode: %s", st.ToString().c_str());
            return -1;
        }
        if (*n + out.size() > *cap) {
            size_t c = *cap ? *cap : 1024;
            while (c < *n + out.size())
                c *= 2;
            void *grown = realloc(*ids, c * sizeof(uint32_t));
            if (!grown) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            *ids = static_cast<uint32_t *>(grown);
            *cap = c;
        }
        for (int id : out)
            (*ids)[(*n)++] = static_cast<uint32_t>(id);
        return 0;
    } catch (const std::exception &e) {
        snprintf(err, errlen, "SentencePiece: %s", e.what());
        return -1;
    }
}

extern "C" int spm_decode(const struct spm *m, const uint32_t *ids, size_t n, char **out, size_t *out_len,
                          char *err, size_t errlen)
{
    try {
        std::vector<int> v(ids, ids + n);
        std::string text;
        auto st = m->sp.Decode(v, &text);
        if (!st.ok()) {
            snprintf(err, errlen, "SentencePiece cannot decode: %s", st.ToString().c_str());
            return -1;
        }
        char *p = static_cast<char *>(malloc(text.size() + 1));
        if (!p) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        memcpy(p, text.data(), text.size());
        p[text.size()] = 0;
        *out = p;
        *out_len = text.size();
        return 0;
    } catch (const std::exception &e) {
        snprintf(err, errlen, "SentencePiece: %s", e.what());
        return -1;
    }
}

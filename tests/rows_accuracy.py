# The held-out accuracy of a fine-tuned model on a row set's targets (the
# responses' tokens and end tokens): the share of targets that are the
# argmax of cod-analyze's logits at the position before them, and the share
# of rows whose every target is.
#   python3 tests/rows_accuracy.py ROWS LOGITS.npy   prints "TOKENS ROWS"
# ROWS is common/rowset.h's file (docs/formats.md), LOGITS cod-analyze logits
# of the same rows (--val ROWS), float32 [rows, seq_len, vocab].
import struct, sys, array, ast
def rows(path):
    b = open(path, 'rb').read()
    n_rows, idx = struct.unpack_from('<Q', b, 16)[0], struct.unpack_from('<Q', b, 40)[0]
    for k in range(n_rows):
        off, ln, _ = struct.unpack_from('<QII', b, idx + 16 * k)
        yield struct.unpack_from('<%dI' % ln, b, off), b[off + 4 * ln: off + 5 * ln]
def logits(path):
    b = open(path, 'rb').read()
    hl = struct.unpack_from('<H', b, 8)[0]
    shape = ast.literal_eval(b[10:10 + hl].decode())['shape']
    a = array.array('f'); a.frombytes(b[10 + hl:])
    return a, shape
a, (S, T, V) = logits(sys.argv[2])
ok = n = whole = recs = 0
for k, (tok, fl) in enumerate(rows(sys.argv[1])):
    good = True
    for i in range(1, len(tok)):
        if fl[i]:
            row = a[(k * T + i - 1) * V:(k * T + i) * V]
            hit = max(range(V), key=row.__getitem__) == tok[i]
            ok += hit; n += 1; good &= hit
    whole += good; recs += 1
print('%.4f %.4f' % (ok / n, whole / recs))

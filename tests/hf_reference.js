// An independent reference for cod-analyze on Hugging Face folders: builds a
// small random model folder the way transformers lays one out (config.json,
// safetensors in bf16, fp16 or fp32, one file or shards with
// model.safetensors.index.json) and a held-out token shard, and computes
// the model's logits in float64 from the stored weights, written from the
// Hugging Face modeling code's definitions (LlamaForCausalLM,
// MistralForCausalLM, Qwen2ForCausalLM: RMSNorm, rotate_half RoPE with
// Llama 3's frequency scaling, repeat_kv, SwiGLU, q/k/v biases, tied
// embeddings), sharing nothing with cod's C.
//   node tests/hf_reference.js build DIR VARIANT   the folder and DIR/val_000000.bin
//   node tests/hf_reference.js check DIR FILE.npy T [LIMIT]   cod's logits against the
//     reference: the largest difference over the largest logit under LIMIT
//     (default 2e-5, fp32; the CUDA backend's bf16 takes 5e-2)
// VARIANT: llama (grouped-query, untied, llama3 rope scaling, bf16, two shards),
// qwen2 (q/k/v biases, tied, fp16), mistral (head_dim given, a sliding window
// no shorter than the sequence, fp32), train (a shape cod trains, bf16).
'use strict';
const fs = require('fs');
const path = require('path');

const VARIANTS = {
    llama: {
        config: {
            architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: 48,
            intermediate_size: 70, num_hidden_layers: 2, num_attention_heads: 4,
            num_key_value_heads: 2, head_dim: 16, vocab_size: 300, max_position_embeddings: 64,
            rms_norm_eps: 1e-5, rope_theta: 500000.0, tie_word_embeddings: false,
            hidden_act: 'silu', torch_dtype: 'bfloat16',
            rope_scaling: {rope_type: 'llama3', factor: 8.0, low_freq_factor: 1.0,
                           high_freq_factor: 4.0, original_max_position_embeddings: 16},
        },
        dtype: 'BF16', shards: 2,
    },
    qwen2: {
        config: {
            architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2', hidden_size: 32,
            intermediate_size: 48, num_hidden_layers: 3, num_attention_heads: 4,
            num_key_value_heads: 2, vocab_size: 300, max_position_embeddings: 64,
            rms_norm_eps: 1e-6, rope_theta: 1000000.0, tie_word_embeddings: true,
            hidden_act: 'silu', use_sliding_window: false, sliding_window: 8,
            max_window_layers: 3, torch_dtype: 'float16',
        },
        dtype: 'F16', shards: 1,
    },
    mistral: {
        config: {
            architectures: ['MistralForCausalLM'], model_type: 'mistral', hidden_size: 32,
            intermediate_size: 40, num_hidden_layers: 2, num_attention_heads: 2,
            num_key_value_heads: 1, head_dim: 24, vocab_size: 300, max_position_embeddings: 64,
            rms_norm_eps: 1e-5, rope_theta: 10000.0, tie_word_embeddings: false,
            hidden_act: 'silu', sliding_window: 32, torch_dtype: 'float32',
        },
        dtype: 'F32', shards: 1,
    },
    // tests/sft_learns.sh's: a shape cod trains (as many key/value heads as
    // query heads, untied, plain RoPE), Llama 2's epsilon, the vocabulary of
    // tests/hf_tokenizers.js's tiny tokenizer.json
    train: {
        config: {
            architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: 64,
            intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4,
            num_key_value_heads: 4, vocab_size: 260, max_position_embeddings: 64,
            rms_norm_eps: 1e-5, rope_theta: 10000.0, tie_word_embeddings: false,
            hidden_act: 'silu', torch_dtype: 'bfloat16', eos_token_id: 259,
        },
        dtype: 'BF16', shards: 1,
    },
    // bench/bench_analyze_hf.sh's: llama-20m's shape (bench/run.sh) with
    // grouped-query attention, Llama 2's vocabulary
    bench: {
        config: {
            architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: 256,
            intermediate_size: 688, num_hidden_layers: 4, num_attention_heads: 4,
            num_key_value_heads: 2, vocab_size: 32000, max_position_embeddings: 256,
            rms_norm_eps: 1e-5, rope_theta: 10000.0, tie_word_embeddings: false,
            hidden_act: 'silu', torch_dtype: 'bfloat16',
        },
        dtype: 'BF16', shards: 1,
    },
};

// a seeded generator (mulberry32): uniform draws, and normal ones
function uniform(seed) {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6D2B79F5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}
function rng(seed) {
    const u = uniform(seed);
    return () => Math.sqrt(-2 * Math.log(u() + 1e-12)) * Math.cos(2 * Math.PI * u());
}

const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);
function toBf16Bits(x) {
    f32[0] = x;
    const b = u32[0];
    return ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) & 0xffff;
}
function fromBf16Bits(h) { u32[0] = h << 16; return f32[0]; }
function toF16Bits(x) {
    const s = x < 0 ? 0x8000 : 0, a = Math.abs(x);
    if (a >= 65520) return s | 0x7c00;
    if (a < Math.pow(2, -24) / 2) return s;
    let e = Math.floor(Math.log2(a));
    if (e < -14) return s | Math.round(a / Math.pow(2, -24)); // subnormal
    let m = Math.round((a / Math.pow(2, e) - 1) * 1024); // ties: JS rounds half up; fine for random data
    if (m === 1024) { m = 0; e++; }
    return s | ((e + 15) << 10) | m;
}
function fromF16Bits(h) {
    const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e === 0) return s * m * Math.pow(2, -24);
    return s * (1 + m / 1024) * Math.pow(2, e - 15);
}
// the value a weight has once stored in dtype
function stored(x, dtype) {
    if (dtype === 'BF16') return fromBf16Bits(toBf16Bits(x));
    if (dtype === 'F16') return fromF16Bits(toF16Bits(x));
    f32[0] = x;
    return f32[0];
}

// Every tensor of the model as {name: {shape, data (float64 of the stored values)}}.
function makeWeights(cfg, dtype) {
    const g = rng(1234), d = cfg.hidden_size, nh = cfg.num_attention_heads;
    const nkv = cfg.num_key_value_heads, hd = cfg.head_dim || d / nh, f = cfg.intermediate_size;
    const V = cfg.vocab_size, qwen = cfg.architectures[0] === 'Qwen2ForCausalLM';
    const w = {};
    const add = (name, shape, std, mean = 0) => {
        const n = shape.reduce((a, b) => a * b, 1), data = new Float64Array(n);
        for (let i = 0; i < n; i++) data[i] = stored(mean + std * g(), dtype);
        w[name] = {shape, data};
    };
    add('model.embed_tokens.weight', [V, d], 1.0);
    for (let l = 0; l < cfg.num_hidden_layers; l++) {
        const p = `model.layers.${l}.`;
        add(p + 'input_layernorm.weight', [d], 0.1, 1);
        add(p + 'self_attn.q_proj.weight', [nh * hd, d], 0.2);
        add(p + 'self_attn.k_proj.weight', [nkv * hd, d], 0.2);
        add(p + 'self_attn.v_proj.weight', [nkv * hd, d], 0.2);
        if (qwen) {
            add(p + 'self_attn.q_proj.bias', [nh * hd], 0.5);
            add(p + 'self_attn.k_proj.bias', [nkv * hd], 0.5);
            add(p + 'self_attn.v_proj.bias', [nkv * hd], 0.5);
        }
        add(p + 'self_attn.o_proj.weight', [d, nh * hd], 0.2);
        add(p + 'post_attention_layernorm.weight', [d], 0.1, 1);
        add(p + 'mlp.gate_proj.weight', [f, d], 0.2);
        add(p + 'mlp.up_proj.weight', [f, d], 0.2);
        add(p + 'mlp.down_proj.weight', [d, f], 0.2);
    }
    add('model.norm.weight', [d], 0.1, 1);
    if (!cfg.tie_word_embeddings) add('lm_head.weight', [V, d], 0.2);
    return w;
}

function writeSafetensors(file, names, w, dtype) {
    const size = dtype === 'F32' ? 4 : 2, header = {__metadata__: {format: 'pt'}};
    let off = 0;
    for (const n of names) {
        const bytes = w[n].data.length * size;
        header[n] = {dtype, shape: w[n].shape, data_offsets: [off, off + bytes]};
        off += bytes;
    }
    let h = Buffer.from(JSON.stringify(header));
    h = Buffer.concat([h, Buffer.alloc((8 - (h.length % 8)) % 8, 0x20)]);
    const data = Buffer.alloc(off);
    let p = 0;
    for (const n of names)
        for (const x of w[n].data) {
            if (dtype === 'F32') data.writeFloatLE(x, p);
            else data.writeUInt16LE(dtype === 'BF16' ? toBf16Bits(x) : toF16Bits(x), p);
            p += size;
        }
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(h.length));
    fs.writeFileSync(file, Buffer.concat([len, h, data]));
}

function build(dir, variant) {
    const v = VARIANTS[variant];
    if (!v) throw new Error(`unknown variant ${variant}`);
    fs.mkdirSync(dir, {recursive: true});
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(v.config, null, 2));
    const w = makeWeights(v.config, v.dtype), names = Object.keys(w);
    if (v.shards === 1) {
        writeSafetensors(path.join(dir, 'model.safetensors'), names, w, v.dtype);
    } else {
        const map = {}, per = Math.ceil(names.length / v.shards);
        for (let s = 0; s < v.shards; s++) {
            const file = `model-${String(s + 1).padStart(5, '0')}-of-${String(v.shards).padStart(5, '0')}.safetensors`;
            const part = names.slice(s * per, (s + 1) * per);
            part.forEach(n => { map[n] = file; });
            writeSafetensors(path.join(dir, file), part, w, v.dtype);
        }
        fs.writeFileSync(path.join(dir, 'model.safetensors.index.json'),
                         JSON.stringify({metadata: {total_size: 0}, weight_map: map}, null, 2));
    }
    // llm.c's shard: 256 int32 of header (magic, version, count), uint16 tokens
    const n = 1 + 4 * 64, g = uniform(99), head = Buffer.alloc(1024), toks = Buffer.alloc(2 * n);
    head.writeInt32LE(20240520, 0);
    head.writeInt32LE(1, 4);
    head.writeInt32LE(n, 8);
    for (let i = 0; i < n; i++)
        toks.writeUInt16LE(Math.floor(g() * v.config.vocab_size), 2 * i);
    fs.writeFileSync(path.join(dir, 'val_000000.bin'), Buffer.concat([head, toks]));
}

// transformers' default and Llama 3 inverse frequencies, in float64
function invFreq(cfg, hd) {
    const theta = cfg.rope_theta || 10000, out = [];
    for (let i = 0; i < hd; i += 2) out.push(1 / Math.pow(theta, i / hd));
    const s = cfg.rope_scaling;
    if (!s || s.rope_type !== 'llama3') return out;
    const lowWl = s.original_max_position_embeddings / s.low_freq_factor;
    const highWl = s.original_max_position_embeddings / s.high_freq_factor;
    return out.map(f => {
        const wl = 2 * Math.PI / f;
        if (wl < highWl) return f;
        if (wl > lowWl) return f / s.factor;
        const sm = (s.original_max_position_embeddings / wl - s.low_freq_factor) /
                   (s.high_freq_factor - s.low_freq_factor);
        return (1 - sm) * f / s.factor + sm * f;
    });
}

function linear(x, W, out, inn, b) { // x [inn] · Wᵀ ([out, inn]) + b
    const y = new Float64Array(out);
    for (let o = 0; o < out; o++) {
        let s = b ? b[o] : 0;
        for (let i = 0; i < inn; i++) s += x[i] * W[o * inn + i];
        y[o] = s;
    }
    return y;
}
function rmsnorm(x, g, eps) {
    let ms = 0;
    for (const v of x) ms += v * v;
    const r = 1 / Math.sqrt(ms / x.length + eps);
    return x.map((v, i) => v * r * g[i]);
}

// logits [T][V] of one sequence
function forward(cfg, w, toks) {
    const d = cfg.hidden_size, nh = cfg.num_attention_heads, nkv = cfg.num_key_value_heads;
    const hd = cfg.head_dim || d / nh, f = cfg.intermediate_size, V = cfg.vocab_size;
    const T = toks.length, eps = cfg.rms_norm_eps, freq = invFreq(cfg, hd), h2 = hd / 2;
    const E = w['model.embed_tokens.weight'].data;
    let h = toks.map(t => E.slice(t * d, (t + 1) * d));
    const rope = (vec, t) => { // every head of vec rotated to position t (rotate_half)
        for (let k = 0; k < vec.length / hd; k++)
            for (let i = 0; i < h2; i++) {
                const a = t * freq[i], c = Math.cos(a), s = Math.sin(a);
                const x1 = vec[k * hd + i], x2 = vec[k * hd + i + h2];
                vec[k * hd + i] = x1 * c - x2 * s;
                vec[k * hd + i + h2] = x2 * c + x1 * s;
            }
        return vec;
    };
    for (let l = 0; l < cfg.num_hidden_layers; l++) {
        const P = n => (w[`model.layers.${l}.${n}`] || {}).data;
        const q = [], k = [], v = [];
        for (let t = 0; t < T; t++) {
            const x = rmsnorm(h[t], P('input_layernorm.weight'), eps);
            q.push(rope(linear(x, P('self_attn.q_proj.weight'), nh * hd, d, P('self_attn.q_proj.bias')), t));
            k.push(rope(linear(x, P('self_attn.k_proj.weight'), nkv * hd, d, P('self_attn.k_proj.bias')), t));
            v.push(linear(x, P('self_attn.v_proj.weight'), nkv * hd, d, P('self_attn.v_proj.bias')));
        }
        for (let t = 0; t < T; t++) {
            const att = new Float64Array(nh * hd);
            for (let hq = 0; hq < nh; hq++) {
                const kv = Math.floor(hq / (nh / nkv)), sc = [];
                for (let u = 0; u <= t; u++) {
                    let s = 0;
                    for (let i = 0; i < hd; i++) s += q[t][hq * hd + i] * k[u][kv * hd + i];
                    sc.push(s / Math.sqrt(hd));
                }
                const m = Math.max(...sc), e = sc.map(s => Math.exp(s - m)), z = e.reduce((a, b) => a + b, 0);
                for (let u = 0; u <= t; u++)
                    for (let i = 0; i < hd; i++) att[hq * hd + i] += e[u] / z * v[u][kv * hd + i];
            }
            const o = linear(att, P('self_attn.o_proj.weight'), d, nh * hd);
            h[t] = h[t].map((x, i) => x + o[i]);
            const x = rmsnorm(h[t], P('post_attention_layernorm.weight'), eps);
            const gt = linear(x, P('mlp.gate_proj.weight'), f, d), up = linear(x, P('mlp.up_proj.weight'), f, d);
            const a = gt.map((g, i) => g / (1 + Math.exp(-g)) * up[i]);
            const dn = linear(a, P('mlp.down_proj.weight'), d, f);
            h[t] = h[t].map((x2, i) => x2 + dn[i]);
        }
    }
    const head = cfg.tie_word_embeddings ? E : w['lm_head.weight'].data;
    return h.map(x => linear(rmsnorm(x, w['model.norm.weight'].data, eps), head, V, d));
}

function readNpy(file) {
    const b = fs.readFileSync(file), hl = b.readUInt16LE(8), hdr = b.slice(10, 10 + hl).toString();
    const shape = /'shape': \(([^)]*)\)/.exec(hdr)[1].split(',').filter(s => s.trim()).map(Number);
    const data = new Float32Array(b.buffer.slice(b.byteOffset + 10 + hl, b.byteOffset + b.length));
    return {shape, data};
}

// The tensors a folder stores (model.safetensors, or the shards its index
// lists) as makeWeights gives them: what a build wrote, or what cod exported.
function readWeights(dir) {
    const index = path.join(dir, 'model.safetensors.index.json');
    const files = fs.existsSync(index)
        ? [...new Set(Object.values(JSON.parse(fs.readFileSync(index)).weight_map))]
        : ['model.safetensors'];
    const w = {};
    for (const file of files) {
        const b = fs.readFileSync(path.join(dir, file)), n = Number(b.readBigUInt64LE(0));
        const head = JSON.parse(b.slice(8, 8 + n).toString());
        for (const [name, t] of Object.entries(head)) {
            if (name === '__metadata__') continue;
            const [lo, hi] = t.data_offsets, at = 8 + n + lo;
            const size = {F32: 4, BF16: 2, F16: 2}[t.dtype];
            if (!size) throw new Error(`${file}: ${name}: dtype ${t.dtype}`);
            const data = new Float64Array((hi - lo) / size);
            for (let i = 0; i < data.length; i++)
                data[i] = t.dtype === 'F32' ? b.readFloatLE(at + 4 * i)
                    : t.dtype === 'BF16' ? fromBf16Bits(b.readUInt16LE(at + 2 * i))
                    : fromF16Bits(b.readUInt16LE(at + 2 * i));
            w[name] = {shape: t.shape, data};
        }
    }
    return w;
}

function check(dir, npy, T, limit) {
    const cfg = JSON.parse(fs.readFileSync(path.join(dir, 'config.json')));
    const w = readWeights(dir), got = readNpy(npy), V = cfg.vocab_size;
    const toks = fs.readFileSync(path.join(dir, 'val_000000.bin')).slice(1024);
    const [S, T2, V2] = got.shape;
    if (T2 !== T || V2 !== V) throw new Error(`logits of shape ${got.shape}, expected [*, ${T}, ${V}]`);
    let worst = 0, scale = 0;
    for (let s = 0; s < S; s++) {
        const seq = [];
        for (let t = 0; t < T; t++) seq.push(toks.readUInt16LE(2 * (s * T + t)));
        const ref = forward(cfg, w, seq);
        for (let t = 0; t < T; t++)
            for (let i = 0; i < V; i++) {
                const r = ref[t][i], c = got.data[(s * T + t) * V + i];
                worst = Math.max(worst, Math.abs(r - c));
                scale = Math.max(scale, Math.abs(r));
            }
    }
    const rel = worst / scale;
    // cod computes in fp32 from the same stored weights: float32's rounding
    // over a few layers, far below what a wrong head mapping, frequency or
    // bias would move (those move logits by a sizeable part of their scale);
    // bf16 activations (8 significant bits) leave a few 1e-2
    console.log(`${cfg.architectures[0]}: ${S} sequences × ${T} × ${V} logits, max |cod − reference| ` +
                `${worst.toExponential(2)} of max |logit| ${scale.toFixed(3)} (relative ${rel.toExponential(2)})`);
    if (!(rel < limit)) { console.log(`logits differ by more than ${limit} of the largest`); process.exit(1); }
}

const [cmd, dir, arg, T, limit] = process.argv.slice(2);
if (cmd === 'build') build(dir, arg);
else if (cmd === 'check') check(dir, arg, Number(T), limit ? Number(limit) : 2e-5);
else { console.error('usage: hf_reference.js build DIR VARIANT | check DIR FILE.npy T'); process.exit(2); }

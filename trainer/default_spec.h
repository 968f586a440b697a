/* The embedded default experiment: a small LNS model on the byte-level
 * default corpus, sized to train on two CPU cores in a few minutes. It is
 * what `cod-train default` and the README's main job run. */
#ifndef COD_DEFAULT_SPEC_H
#define COD_DEFAULT_SPEC_H

const char *default_spec_json(void);

#endif

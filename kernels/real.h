/* The scalar type of the CPU backend. The trainer and CPU kernels are
 * compiled twice: with float for training, and with -DCOD_REAL_DOUBLE so that
 * every backward pass can be checked against finite differences in double. */
#ifndef COD_REAL_H
#define COD_REAL_H

#ifdef COD_REAL_DOUBLE
typedef double real;
#define REAL_NAME "f64"
#else
typedef float real;
#define REAL_NAME "f32"
#endif

#endif

#ifndef COMMON_H
#define COMMON_H

#define NUMBER_THREADS 128

typedef struct {
  float q, x, y, z;
} charge4;

#endif

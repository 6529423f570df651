#ifndef COMMON_H
#define COMMON_H

#define BLOCK_SIZE 16

#endif

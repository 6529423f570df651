#pragma once

#define BLOCK_SIZE 16

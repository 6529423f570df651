#pragma once

// TILE_DIM comes from the build (CMake: target_compile_definitions), BLOCK_ROWS is fixed.
#define BLOCK_ROWS 8

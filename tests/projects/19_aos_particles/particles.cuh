#pragma once

struct Particle {
  float x, y, z;
  float vx, vy, vz;
  float mass, charge;
};

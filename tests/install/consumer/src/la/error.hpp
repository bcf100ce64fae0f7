// A consumer folder named la/ with a file named like la's core error.hpp: la's headers
// must keep using their own.
#pragma once
namespace consumer {
struct error {};
}  // namespace consumer

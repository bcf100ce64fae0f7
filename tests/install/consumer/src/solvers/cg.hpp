// The consumer's own CG; must never be picked up by la.
#pragma once
namespace consumer {
inline int cg() { return 42; }
}  // namespace consumer

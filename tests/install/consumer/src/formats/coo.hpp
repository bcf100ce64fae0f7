// The consumer's own COO type, in a folder named like la's. If la's headers found their
// siblings through the consumer's include path, this file would replace la's formats/coo.hpp
// and la would not compile.
#pragma once
namespace consumer {
struct coo {
  int entries = 0;
};
}  // namespace consumer

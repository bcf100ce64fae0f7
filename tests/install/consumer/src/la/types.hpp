// Even a consumer file at la's own <la/types.hpp> path must not replace la's internal
// include of it (la's headers include each other relatively).
#pragma once
#error "a consumer header replaced la's <la/types.hpp>"

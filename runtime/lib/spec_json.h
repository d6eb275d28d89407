/* struct ward_spec -> config.json: every field the parser (spec.c, resources.c) models,
 * unset optionals omitted. parse(serialize(s)) is s again (tests/unit/test_spec_json.c),
 * so the JSON it writes says what ward enforces, no more and no less. What the struct
 * does not model is not written: it was refused (or, for a trusted tenant, let through
 * unread) before the struct existed. Runtime-only members (ward_mount.host_sysfs,
 * ward_linux.host_net_sysctls, seccomp_pod, which is the annotation's) are not spec
 * fields and are not written. */
#ifndef WARD_SPEC_JSON_H
#define WARD_SPEC_JSON_H

#include <jansson.h>

#include "resources.h"
#include "spec.h"

/* A new JSON object (never NULL). */
json_t *ward_spec_to_json(const struct ward_spec *s);
/* linux.resources as an object (never NULL; {} when nothing is set). */
json_t *ward_resources_to_json(const struct ward_resources *r);
/* A process object (exec --process shape). */
json_t *ward_process_to_json(const struct ward_process *p);

#endif

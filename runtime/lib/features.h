/* `ward features`: the OCI features document, generated from the tables the code uses. */
#ifndef WARD_FEATURES_H
#define WARD_FEATURES_H

/* malloc'd JSON text (pretty printed, trailing newline). */
char *ward_features_json(void);

#endif

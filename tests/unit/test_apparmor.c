/* apparmor.c: the embedded ward-default text is the file in runtime/apparmor, the profiles
 * list is read by exact name, "unconfined" needs nothing, names that cannot be written to
 * the attr file are refused. Run from the checkout's root (make does). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "apparmor.h"
#include "tap.h"
#include "util.h"

int main(void)
{
	struct ward_err err = {0};
	size_t len, flen = 0;
	const char *text = ward_apparmor_default_text(&len);
	char *file = read_file_at(AT_FDCWD, "runtime/apparmor/ward-default", &flen, &err);

	CHECK(file != NULL, "runtime/apparmor/ward-default is readable from the checkout");
	CHECK(file && len == flen && !memcmp(text, file, len),
	      "the embedded profile is byte for byte runtime/apparmor/ward-default");
	CHECK(text[len] == '\0', "the embedded profile is NUL-terminated");
	CHECK_STR_CONTAINS(text, "profile ward-default flags=(attach_disconnected,mediate_deleted)",
			   "the embedded text declares the ward-default profile");
	CHECK_STR_CONTAINS(text, "deny network alg,", "the embedded text denies AF_ALG");
	free(file);

	const char *list = "docker-default (enforce)\n"
			   "ward-default-old (enforce)\n"
			   "/usr/bin/man (enforce)\n"
			   "with space (complain)\n";
	CHECK(ward_apparmor_list_has(list, "docker-default"), "list: first entry found");
	CHECK(ward_apparmor_list_has(list, "/usr/bin/man"), "list: path-named profile found");
	CHECK(ward_apparmor_list_has(list, "with space"), "list: name with a space found");
	CHECK(!ward_apparmor_list_has(list, "ward-default"),
	      "list: a prefix of another profile's name is not that profile");
	CHECK(!ward_apparmor_list_has(list, "docker"), "list: a prefix is not a match");
	CHECK(!ward_apparmor_list_has("", "ward-default"), "list: empty list has nothing");
	CHECK(ward_apparmor_list_has("ward-default (enforce)", "ward-default"),
	      "list: last line without a newline");

	CHECK(ward_apparmor_is_unconfined(NULL) && ward_apparmor_is_unconfined("") &&
		  ward_apparmor_is_unconfined("unconfined") &&
		  !ward_apparmor_is_unconfined("ward-default"),
	      "unconfined: NULL, \"\" and \"unconfined\" only");
	CHECK(ward_apparmor_prepare("unconfined", &err) == 0, "prepare(unconfined) needs nothing");
	CHECK(ward_apparmor_exec_label("unconfined", &err) == 0 &&
		  ward_apparmor_exec_label(NULL, &err) == 0,
	      "exec_label(unconfined) writes nothing");

	ward_err_clear(&err);
	CHECK(ward_apparmor_exec_label("bad name", &err) < 0,
	      "exec_label refuses a name with a space");
	CHECK_STR_CONTAINS(err.msg, "space or a control character", "the error says why");
	ward_err_clear(&err);
	CHECK(ward_apparmor_ensure_loaded("x\nexec unconfined", &err) < 0,
	      "ensure_loaded refuses a name with a newline");

	ward_err_clear(&err);
	if (!ward_apparmor_enabled()) {
		CHECK(ward_apparmor_prepare("ward-default", &err) < 0,
		      "no AppArmor on this host: prepare(ward-default) fails");
		CHECK_STR_CONTAINS(err.msg, "AppArmor is not enabled on this host",
				   "the error says AppArmor is not enabled");
	} else {
		printf("# AppArmor is enabled here: the not-enabled error is tested elsewhere\n");
	}
	TAP_DONE();
}

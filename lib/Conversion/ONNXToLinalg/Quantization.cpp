#include "Utils.h"
void dlc::populateQuantizationHandlers(HandlerRegistry &) {}

#include "Utils.h"
void dlc::populateResizeHandlers(HandlerRegistry &) {}

#include "Utils.h"
void dlc::populateMatrixHandlers(HandlerRegistry &) {}
